package io.lvmqos.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The driver process on the host, through a real CSI client over its socket. The host has no
 * device-mapper, so the volume group does not answer: Probe must say so (ready=false), quickly.
 */
class DriverProcessIT {

    @TempDir
    Path dir;

    @Test
    void servesIdentityOnAPrivateSocketAndStopsOnSigterm() throws Exception {
        Path socket = dir.resolve("csi.sock");
        Files.writeString(dir.resolve("placeholder"), "");
        try (DriverProcess driver = DriverProcess.start(socket, dir.resolve("driver.log"),
                DriverProcess.shippedJvmFlags(), "--node-id", "node-1", "--volume-group", "lvmqos-host-absent")) {
            CsiClient.awaitSocket(socket, Duration.ofSeconds(30));
            try (CsiClient client = CsiClient.connect(socket)) {
                Csi.GetPluginInfoResponse info = client.identity().getPluginInfo(Csi.GetPluginInfoRequest.getDefaultInstance());
                assertEquals("lvmqos.csi.io", info.getName());
                assertFalse(info.getVendorVersion().isBlank());

                List<Csi.PluginCapability> capabilities = client.identity()
                        .getPluginCapabilities(Csi.GetPluginCapabilitiesRequest.getDefaultInstance()).getCapabilitiesList();
                assertTrue(capabilities.stream().anyMatch(c -> c.getService().getType()
                        == Csi.PluginCapability.Service.Type.CONTROLLER_SERVICE));
                assertTrue(capabilities.stream().anyMatch(c -> c.getService().getType()
                        == Csi.PluginCapability.Service.Type.VOLUME_ACCESSIBILITY_CONSTRAINTS));
                assertTrue(capabilities.stream().anyMatch(c -> c.getVolumeExpansion().getType()
                        == Csi.PluginCapability.VolumeExpansion.Type.ONLINE));

                Csi.ProbeResponse probe = client.identity().probe(Csi.ProbeRequest.getDefaultInstance());
                assertTrue(probe.hasReady());
                assertFalse(probe.getReady().getValue(), "the volume group does not exist here");
            }
            assertEquals("rw-rw----", PosixFilePermissions.toString(
                    Files.getPosixFilePermissions(socket, LinkOption.NOFOLLOW_LINKS)));
            driver.terminate(Duration.ofSeconds(15));
            assertFalse(Files.exists(socket), "the socket is removed on a clean stop");
            String log = driver.log();
            assertTrue(log.contains("not ready"), log);
            assertTrue(log.contains("GetPluginInfo - "), "one line per RPC: " + log);
            assertFalse(log.contains("Unknown channel option"), "a connection over the unix socket is no cause for a warning: " + log);
        }
    }

    @Test
    void removesAStaleSocketAtStart() throws Exception {
        Path socket = dir.resolve("stale.sock");
        try (DriverProcess first = DriverProcess.start(socket, dir.resolve("first.log"), List.of(), "--node-id", "n1")) {
            CsiClient.awaitSocket(socket, Duration.ofSeconds(30));
            first.process().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        assertTrue(Files.exists(socket, LinkOption.NOFOLLOW_LINKS), "SIGKILL leaves the socket file behind");
        try (DriverProcess second = DriverProcess.start(socket, dir.resolve("second.log"), List.of(), "--node-id", "n1");
             CsiClient client = connectWhenServing(socket)) {
            assertEquals("lvmqos.csi.io", client.identity().getPluginInfo(Csi.GetPluginInfoRequest.getDefaultInstance()).getName());
        }
    }

    @Test
    void refusesToStartWithoutANodeIdWithAOneLineReason() throws Exception {
        Path log = dir.resolve("noid.log");
        try (DriverProcess driver = DriverProcess.start(dir.resolve("x.sock"), log, List.of())) {
            assertTrue(driver.process().waitFor(30, TimeUnit.SECONDS));
            assertNotEquals(0, driver.process().exitValue());
            List<String> lines = Files.readAllLines(log).stream().filter(l -> !l.startsWith("WARNING")).toList();
            assertEquals(1, lines.size(), "one line: " + lines);
            assertTrue(lines.getFirst().contains("--node-id"), lines.getFirst());
        }
    }

    /** Retries GetPluginInfo until the new process answers: the old socket file exists from the start. */
    private static CsiClient connectWhenServing(Path socket) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            CsiClient client = CsiClient.connect(socket);
            try {
                client.identity().withDeadlineAfter(2, TimeUnit.SECONDS)
                        .getPluginInfo(Csi.GetPluginInfoRequest.getDefaultInstance());
                return client;
            } catch (RuntimeException e) {
                client.close();
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(100);
            }
        }
    }
}
