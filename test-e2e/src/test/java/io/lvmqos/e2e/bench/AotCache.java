package io.lvmqos.e2e.bench;

import csi.v1.Csi;
import io.grpc.StatusRuntimeException;
import io.lvmqos.e2e.CsiClient;
import io.lvmqos.e2e.DriverProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The AOT cache the image's entrypoint uses, made on the host the way the Dockerfile makes it. */
final class AotCache {

    private AotCache() {
    }

    /**
     * The flags plus an AOT cache trained, as the image's is, by a start and the first calls of a
     * plugin (scripts/image/TrainingClient's), without --watch-kubernetes as in the image build.
     */
    static List<String> trained(Path dir, List<String> flags, String name) throws Exception {
        Path cache = dir.resolve(name + ".aot");
        List<String> training = new ArrayList<>(flags);
        training.add("-XX:AOTCacheOutput=" + cache);
        Path socket = dir.resolve("training.sock");
        try (DriverProcess driver = DriverProcess.start(socket, dir.resolve("training.log"), training,
                "--node-id", "bench", "--volume-group", "lvmqos-bench-absent")) {
            probeUntilAnswered(socket);
            try (CsiClient client = CsiClient.connect(socket)) {
                client.identity().getPluginInfo(Csi.GetPluginInfoRequest.getDefaultInstance());
                client.identity().getPluginCapabilities(Csi.GetPluginCapabilitiesRequest.getDefaultInstance());
                client.node().nodeGetInfo(Csi.NodeGetInfoRequest.getDefaultInstance());
                client.node().nodeGetCapabilities(Csi.NodeGetCapabilitiesRequest.getDefaultInstance());
                client.controller().controllerGetCapabilities(Csi.ControllerGetCapabilitiesRequest.getDefaultInstance());
                try {
                    client.node().nodeUnpublishVolume(Csi.NodeUnpublishVolumeRequest.getDefaultInstance());
                } catch (StatusRuntimeException expected) {
                    // INVALID_ARGUMENT: the path of an error answer
                }
            }
            // the cache is written at exit, by a second JVM the first one waits for
            driver.terminate(Duration.ofSeconds(120));
        }
        if (!Files.isRegularFile(cache) || Files.size(cache) == 0) {
            throw new AssertionError("the training run wrote no AOT cache: " + Files.readString(dir.resolve("training.log")));
        }
        List<String> withCache = new ArrayList<>(flags);
        withCache.add("-XX:AOTCache=" + cache);
        return withCache;
    }

    /** Waits for the socket, then for a Probe to be answered (ready or not). */
    static void probeUntilAnswered(Path socket) throws Exception {
        while (!Files.exists(socket)) {
            Thread.sleep(2);
        }
        try (CsiClient client = CsiClient.connect(socket)) {
            while (true) {
                try {
                    client.identity().withDeadlineAfter(5, TimeUnit.SECONDS).probe(Csi.ProbeRequest.getDefaultInstance());
                    return;
                } catch (RuntimeException notYet) {
                    Thread.sleep(2);
                }
            }
        }
    }
}
