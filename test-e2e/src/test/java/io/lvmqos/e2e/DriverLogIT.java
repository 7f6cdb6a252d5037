package io.lvmqos.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.grpc.StatusRuntimeException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the driver process writes to its log, on the host: no request's secrets at any log level
 * (neither as text nor as the hex of Netty's frame dumps) unless wire logging is asked for, and
 * values from a client that stay on their line and within their cap.
 *
 * <p>The calls fail here (the host has no device-mapper and no kubelet); what matters is that their
 * bytes, secrets included, reached the driver.
 */
class DriverLogIT {

    /** Every way a level could be raised from outside: the old -D flags, including Netty's frame logger by name. */
    private static final List<String> RAISED_BY_JVM_FLAGS = List.of(
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=trace",
            "-Dorg.slf4j.simpleLogger.log.io.grpc.netty.NettyServerHandler=trace",
            "-Dorg.slf4j.simpleLogger.log.io.netty=trace");

    private static final String CREATE_SECRET = "Xq7pLm2vRt9sK4wZ";
    private static final String STAGE_SECRET = "Bn5cYh8jDf3gQe6u";

    @TempDir
    Path dir;

    @Test
    void noSecretReachesTheLogAtTraceLevel() throws Exception {
        String log = runAndLog("trace.log", RAISED_BY_JVM_FLAGS, "--log-level", "trace");

        assertTrue(log.contains(" DEBUG CommandRunner - "), "the driver's own debug lines are there: " + tail(log));
        assertTrue(log.contains("CreateVolume pvc-secret") && log.contains("NodeStageVolume node-1/"),
                "both calls arrived: " + tail(log));
        for (String secret : List.of(CREATE_SECRET, STAGE_SECRET)) {
            assertEquals(Optional.empty(), whereIs(secret, log), "secret " + secret + " is in the log");
        }
    }

    @Test
    void wireLoggingShowsTheSecretsAndSaysSoAtStart() throws Exception {
        String log = runAndLog("wire.log", List.of(), "--log-level", "debug", "--log-wire");

        assertTrue(log.contains("--log-wire is on"), tail(log));
        assertTrue(whereIs(CREATE_SECRET, log).isPresent(), "wire logging dumps the frames: this test can see a"
                + " secret when one is logged\n" + tail(log));
    }

    @Test
    void aNameWithANewlineStaysOnItsLineAndALongIdIsCut() throws Exception {
        Path socket = dir.resolve("inject.sock");
        Path logFile = dir.resolve("inject.log");
        String longId = "v".repeat(4096);
        String description;
        try (DriverProcess driver = DriverProcess.start(socket, logFile, DriverProcess.shippedJvmFlags(),
                "--node-id", "node-1", "--volume-group", "lvmqos-host-absent")) {
            CsiClient.awaitSocket(socket, Duration.ofSeconds(30));
            try (CsiClient client = CsiClient.connect(socket)) {
                call(() -> client.controller().withDeadlineAfter(10, TimeUnit.SECONDS).createVolume(
                        Csi.CreateVolumeRequest.newBuilder().setName("pvc-1\n2026-12-03T00:00:00Z [rpc] INFO rpc -"
                                + " DeleteVolume forged 1 ms OK").addVolumeCapabilities(mountCapability()).build()));
                description = call(() -> client.controller().withDeadlineAfter(10, TimeUnit.SECONDS)
                        .controllerModifyVolume(Csi.ControllerModifyVolumeRequest.newBuilder().setVolumeId(longId)
                                .build()));
            }
            driver.terminate(Duration.ofSeconds(15));
        }
        String log = java.nio.file.Files.readString(logFile);

        assertFalse(log.contains("\n2026-12-03T00:00:00Z [rpc]"), "a forged line: " + tail(log));
        assertTrue(log.contains("pvc-1\\n2026-12-03T00:00:00Z"), "the newline is escaped on the call's line: "
                + tail(log));
        assertFalse(log.contains("v".repeat(300)), "the 4 KiB id is cut in the log: " + tail(log));
        assertTrue(log.contains("v".repeat(256) + "…(+3840 bytes, sha256 "), tail(log));
        assertTrue(description.length() < 600 && description.contains("…(+3840 bytes, sha256 "),
                "the status echoes the id cut too: " + description);
    }

    /** Starts the driver, sends a CreateVolume and a NodeStageVolume that carry secrets, stops it, and returns its log. */
    private String runAndLog(String name, List<String> extraJvmFlags, String... flags) throws Exception {
        Path socket = dir.resolve(name + ".sock");
        Path logFile = dir.resolve(name);
        List<String> jvmFlags = new ArrayList<>(DriverProcess.shippedJvmFlags());
        jvmFlags.addAll(extraJvmFlags);
        List<String> args = new ArrayList<>(List.of("--node-id", "node-1", "--volume-group", "lvmqos-host-absent"));
        args.addAll(List.of(flags));
        try (DriverProcess driver = DriverProcess.start(socket, logFile, jvmFlags, args.toArray(String[]::new))) {
            CsiClient.awaitSocket(socket, Duration.ofSeconds(30));
            try (CsiClient client = CsiClient.connect(socket)) {
                call(() -> client.controller().withDeadlineAfter(10, TimeUnit.SECONDS).createVolume(
                        Csi.CreateVolumeRequest.newBuilder().setName("pvc-secret")
                                .addVolumeCapabilities(mountCapability())
                                .putSecrets("password", CREATE_SECRET).build()));
                call(() -> client.node().withDeadlineAfter(10, TimeUnit.SECONDS).nodeStageVolume(
                        Csi.NodeStageVolumeRequest.newBuilder()
                                .setVolumeId("node-1/lvmqos-host-absent/vol_0123456789abcdef01234567")
                                .setStagingTargetPath(dir.resolve("staging").toString())
                                .setVolumeCapability(mountCapability())
                                .putSecrets("password", STAGE_SECRET).build()));
            }
            driver.terminate(Duration.ofSeconds(15));
        }
        return java.nio.file.Files.readString(logFile);
    }

    /**
     * Where the secret shows in the log: as text, or as hex in either case, with or without
     * separators (Netty prints contiguous lower-case hex, and hex dump tables with spaces).
     */
    static Optional<String> whereIs(String secret, String log) {
        if (log.contains(secret)) {
            return Optional.of("as text");
        }
        String hex = HexFormat.of().formatHex(secret.getBytes(StandardCharsets.UTF_8));
        String hexOnly = log.toLowerCase(Locale.ROOT).replaceAll("[^0-9a-f]", "");
        if (hexOnly.contains(hex)) {
            return Optional.of("as hex");
        }
        // a hex dump table breaks a value across rows: any 8 bytes of it are enough to count
        for (int start = 0; start + 16 <= hex.length(); start += 2) {
            if (hexOnly.contains(hex.substring(start, start + 16))) {
                return Optional.of("as hex, in part");
            }
        }
        return Optional.empty();
    }

    private static Csi.VolumeCapability mountCapability() {
        return Csi.VolumeCapability.newBuilder()
                .setMount(Csi.VolumeCapability.MountVolume.newBuilder().setFsType("ext4"))
                .setAccessMode(Csi.VolumeCapability.AccessMode.newBuilder()
                        .setMode(Csi.VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER))
                .build();
    }

    /** Makes the call and returns its failure's description; these calls are expected to fail on the host. */
    private static String call(Runnable call) {
        try {
            call.run();
            return "";
        } catch (StatusRuntimeException e) {
            return String.valueOf(e.getStatus().getDescription());
        }
    }

    private static String tail(String log) {
        return log.length() <= 1500 ? log : "…" + log.substring(log.length() - 1500);
    }
}
