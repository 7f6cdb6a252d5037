package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.bench.BenchReport.ms;
import static io.lvmqos.e2e.bench.BenchReport.percentile;
import static io.lvmqos.e2e.guest.Csi2.MIB;
import static org.junit.jupiter.api.Assertions.assertEquals;

import csi.v1.Csi;
import io.lvmqos.e2e.CsiClient;
import io.lvmqos.e2e.bench.BenchReport;
import io.lvmqos.e2e.guest.GuestPods.Pod;
import io.lvmqos.e2e.guest.GuestPods.QosClass;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.GuestEnv;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Guest side of PublishCostBenchmark (issue 40): what a NodePublishVolume costs as its client sees
 * it, and the system calls the driver makes for it. The node holds {@value #VOLUMES} thin ext4
 * volumes, each staged, {@value #OTHERS} of them published into pods of their own (a pod cgroup with
 * a container cgroup below it), every other one with a write limit; the last one, with
 * {@code writeBPS: 4Mi}, is published into one more pod and unpublished again, {@value #ROUNDS}
 * rounds after {@value #WARMUP} warm-up ones, each to a fresh target whose volume directory goes
 * with its unpublish, as kubelet's does; each round ends in a NodeGetCapabilities call, which does no
 * work, so its time is what any call costs the client in this guest. The driver runs as deployed: deploy/jvm.options, info
 * logging (one line per call) to a file.
 *
 * <p>Then, with the rounds done, {@code strace -c -f} is attached to every thread of the driver
 * around each of {@value #TRACED} publishes (and as many unpublishes, NodeGetCapabilities calls as the
 * floor of a call that does no work, and windows of as long in which nothing is asked): attached,
 * the call, the driver's log line for it, detached. A
 * window in which the periodic health check started a program ({@code execve}) is traced again.
 * One more publish is traced call by call ({@code strace -f -tt -T}) into
 * {@value #TIMELINE}, and its calls are counted by thread. Writes {@value #REPORT}.md; it measures
 * and reports, it asserts no time.
 */
public class PublishCostCheck {

    public static final String REPORT = "publish-cost";
    static final int VOLUMES = 10;
    static final int OTHERS = VOLUMES - 1;
    static final int WARMUP = 50;
    static final int ROUNDS = 60;
    static final int TRACED = 20;
    static final String TIMELINE = "publish-timeline.txt";
    private static final long VOLUME_BYTES = 16 * MIB;
    private static final Map<String, String> LIMITED = Map.of("lvmType", "thin", "writeBPS", "4Mi");
    private static final Map<String, String> FREE = Map.of("lvmType", "thin");

    @BeforeAll
    static void onlyInTheGuest() {
        GuestEnv.assumeInGuest();
    }

    private CsiClient client;
    private Path driverLog;

    @Test
    void publishAsItsClientSeesItAndItsSystemCalls() throws Exception {
        assertEquals(CgroupMode.V2, GuestEnv.cgroupMode(), "the publish cost benchmark limits io.max: boot with cgroup v2");
        driverLog = GuestEnv.outDir().resolve("driver-publish-cost.log");
        try (GuestDriver driver = GuestDriver.start(GuestDriver.Options.standard().log(driverLog).awaitingReady())) {
            client = driver.client();
            Csi.VolumeCapability capability = Csi2.mount();
            List<Path> others = new ArrayList<>();
            for (int i = 0; i < OTHERS; i++) {
                String id = create("cost-" + i, i % 2 == 0 ? LIMITED : FREE);
                Path staging = stage(id, capability);
                Pod pod = GuestPods.create(QosClass.BURSTABLE);
                pod.newContainer();
                Path target = pod.volumePath("pv-cost-" + i);
                client.node().nodePublishVolume(publish(id, staging, target, pod, capability));
                others.add(target);
            }
            String measured = create("cost-measured", LIMITED);
            Rounds rounds = new Rounds(measured, stage(measured, capability), capability);
            for (int i = 0; i < WARMUP; i++) {
                rounds.pair(false);
            }
            for (int i = 0; i < ROUNDS; i++) {
                rounds.pair(true);
            }
            String log = Files.readString(driverLog);
            Path timeline = GuestEnv.outDir().resolve(TIMELINE);
            long pid = driver.process().process().pid();
            Windows windows = new Windows();
            // one attach for all the traced calls: see GuestStrace.attach on why it is never detached earlier
            try (GuestStrace.Session trace = GuestStrace.attach(pid, timeline)) {
                rounds.traced(windows);
            }
            List<GuestStrace.Call> calls = GuestStrace.calls(timeline);
            BenchReport.writeTo(GuestEnv.outDir(), REPORT, report(rounds, log, windows, calls, pid, others.size() + 1));
        }
    }

    private String create(String name, Map<String, String> parameters) {
        return client.controller().createVolume(Csi2.create(name, VOLUME_BYTES, parameters).build())
                .getVolume().getVolumeId();
    }

    private Path stage(String volumeId, Csi.VolumeCapability capability) {
        return Csi2.stageByLvName(client, volumeId, capability);
    }

    /** As kubelet asks: the pod's uid, name and namespace in the volume context. */
    private static Csi.NodePublishVolumeRequest publish(String volumeId, Path staging, Path target, Pod pod,
                                                       Csi.VolumeCapability capability) {
        return Csi.NodePublishVolumeRequest.newBuilder().setVolumeId(volumeId)
                .setStagingTargetPath(staging.toString()).setTargetPath(target.toString())
                .setVolumeCapability(capability)
                .putVolumeContext("csi.storage.k8s.io/pod.uid", pod.uid())
                .putVolumeContext("csi.storage.k8s.io/pod.name", "cost-" + pod.uid().substring(0, 8))
                .putVolumeContext("csi.storage.k8s.io/pod.namespace", "default")
                .putVolumeContext("csi.storage.k8s.io/ephemeral", "false")
                .build();
    }

    /** The measured volume's publish and unpublish, into one pod with a container, a fresh target each time. */
    private final class Rounds {
        private final String volumeId;
        private final Path staging;
        private final Csi.VolumeCapability capability;
        private final Pod pod;
        private final List<Long> publishNanos = new ArrayList<>();
        private final List<Long> unpublishNanos = new ArrayList<>();
        private final List<Long> capabilitiesNanos = new ArrayList<>();
        private final List<Long> leanPublishNanos = new ArrayList<>();
        private final List<Long> leanUnpublishNanos = new ArrayList<>();
        private final List<Long> leanCapabilitiesNanos = new ArrayList<>();
        private final LeanGrpcClient lean;
        private int next;

        Rounds(String volumeId, Path staging, Csi.VolumeCapability capability) throws IOException {
            this.volumeId = volumeId;
            this.staging = staging;
            this.capability = capability;
            this.pod = GuestPods.create(QosClass.BURSTABLE);
            pod.newContainer();
            this.lean = LeanGrpcClient.connect(GuestDriver.SOCKET);
        }

        private Path nextTarget() {
            return pod.volumePath("pv-round-" + next++);
        }

        void pair(boolean record) throws IOException {
            Path target = nextTarget();
            long t0 = System.nanoTime();
            publishAt(target);
            long t1 = System.nanoTime();
            unpublishAt(target);
            long t2 = System.nanoTime();
            // the floor under both: a call that does no work, over the same channel, the same way
            client.node().nodeGetCapabilities(Csi.NodeGetCapabilitiesRequest.getDefaultInstance());
            long t3 = System.nanoTime();
            // the same three calls from the lean client, to a target of their own
            Path leanTarget = nextTarget();
            long l0 = System.nanoTime();
            lean.call("csi.v1.Node/NodePublishVolume", publish(volumeId, staging, leanTarget, pod, capability),
                    Csi.NodePublishVolumeResponse.parser());
            long l1 = System.nanoTime();
            lean.call("csi.v1.Node/NodeUnpublishVolume", Csi.NodeUnpublishVolumeRequest.newBuilder()
                    .setVolumeId(volumeId).setTargetPath(leanTarget.toString()).build(),
                    Csi.NodeUnpublishVolumeResponse.parser());
            Files.deleteIfExists(leanTarget.getParent());
            long l2 = System.nanoTime();
            lean.call("csi.v1.Node/NodeGetCapabilities", Csi.NodeGetCapabilitiesRequest.getDefaultInstance(),
                    Csi.NodeGetCapabilitiesResponse.parser());
            long l3 = System.nanoTime();
            if (record) {
                publishNanos.add(t1 - t0);
                unpublishNanos.add(t2 - t1);
                capabilitiesNanos.add(t3 - t2);
                leanPublishNanos.add(l1 - l0);
                leanUnpublishNanos.add(l2 - l1);
                leanCapabilitiesNanos.add(l3 - l2);
            }
        }

        private void publishAt(Path target) {
            client.node().nodePublishVolume(publish(volumeId, staging, target, pod, capability));
        }

        /** Unpublishes, then removes the volume's directory as kubelet does (csi_mounter's removeMountDir). */
        private void unpublishAt(Path target) throws IOException {
            client.node().nodeUnpublishVolume(Csi.NodeUnpublishVolumeRequest.newBuilder().setVolumeId(volumeId)
                    .setTargetPath(target.toString()).build());
            Files.deleteIfExists(target.getParent());
        }

        /**
         * {@value #TRACED} windows of each kind, one call each, while strace records every system
         * call of the driver: publishes (each unpublished afterwards, outside its window),
         * unpublishes (published before, outside), NodeGetCapabilities calls, and windows as long
         * as the median publish's in which nothing is asked. A window runs from just before the
         * call until the driver's log has the call's line, so that work done after the answer
         * counts too; a pause after each lets whatever the call left behind finish outside.
         */
        void traced(Windows windows) throws Exception {
            for (int i = 0; i < TRACED; i++) {
                Path target = nextTarget();
                windows.call("NodePublishVolume", () -> publishAt(target));
                unpublishAt(target);
                pause();
            }
            for (int i = 0; i < TRACED; i++) {
                Path target = nextTarget();
                publishAt(target);
                pause();
                windows.call("NodeUnpublishVolume", () -> unpublishAt(target));
            }
            for (int i = 0; i < TRACED; i++) {
                windows.call("NodeGetCapabilities", () -> client.node()
                        .nodeGetCapabilities(Csi.NodeGetCapabilitiesRequest.getDefaultInstance()));
            }
            long median = windows.medianMicros("NodePublishVolume");
            for (int i = 0; i < TRACED; i++) {
                windows.idle(median);
            }
        }
    }

    /** Which stretches of time belonged to which call, in µs since the epoch (the clock strace -ttt prints). */
    private final class Windows {
        private final Map<String, List<long[]>> byCall = new LinkedHashMap<>();

        void call(String method, GuestStrace.Work work) throws IOException {
            long linesBefore = rpcLines(method);
            long start = epochMicros();
            work.run();
            awaitLogLine(method, linesBefore);
            byCall.computeIfAbsent(method, m -> new ArrayList<>()).add(new long[] {start, epochMicros()});
            pause();
        }

        void idle(long micros) throws IOException {
            long start = epochMicros();
            sleepNanos(micros * 1000);
            byCall.computeIfAbsent(IDLE, m -> new ArrayList<>()).add(new long[] {start, epochMicros()});
            pause();
        }

        long medianMicros(String method) {
            return (long) percentile(byCall.get(method).stream().mapToDouble(w -> w[1] - w[0]).toArray(), 50);
        }

        /** The calls that began in each window of the method, one list per window. */
        List<List<GuestStrace.Call>> split(String method, List<GuestStrace.Call> calls) {
            List<List<GuestStrace.Call>> split = new ArrayList<>();
            for (long[] window : byCall.get(method)) {
                split.add(calls.stream().filter(c -> c.startMicros() >= window[0] && c.startMicros() <= window[1])
                        .filter(c -> !c.name().equals(GuestStrace.ATTACH_ARTIFACT)).toList());
            }
            return split;
        }
    }

    private static final String IDLE = "nothing asked (as long as a publish)";

    private static long epochMicros() {
        java.time.Instant now = java.time.Instant.now();
        return now.getEpochSecond() * 1_000_000 + now.getNano() / 1000;
    }

    /** Lets what a call left behind (its log line's write, threads going back to wait) finish outside any window. */
    private static void pause() throws IOException {
        sleepNanos(Duration.ofMillis(50).toNanos());
    }

    private static String threadName(long pid, long tid) {
        try {
            // a pool's threads are numbered: one name for them all
            return Files.readString(Path.of("/proc", Long.toString(pid), "task", Long.toString(tid), "comm")).strip()
                    .replaceAll("-\\d+$", "-N");
        } catch (IOException ended) {
            return "a thread that has ended";
        }
    }

    private long rpcLines(String method) throws IOException {
        return Files.readAllLines(driverLog).stream().filter(l -> l.contains("rpc - " + method + " ")).count();
    }

    /** Until the driver has logged one more line for the method (at most 5 s). */
    private void awaitLogLine(String method, long before) throws IOException {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (rpcLines(method) <= before && System.nanoTime() < deadline) {
            sleepNanos(Duration.ofMillis(1).toNanos()); // the driver needs the one CPU to write it
        }
    }

    private static void sleepNanos(long nanos) throws IOException {
        try {
            Thread.sleep(Duration.ofNanos(nanos));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    private static double[] millis(List<Long> nanos) {
        return nanos.stream().mapToDouble(n -> n / 1e6).toArray();
    }

    private static String row(String label, double[] values) {
        return "| " + label + " | " + ms(percentile(values, 50)) + " | " + ms(percentile(values, 90)) + " | "
                + ms(percentile(values, 99)) + " |\n";
    }

    private static String report(Rounds rounds, String log, Windows windows, List<GuestStrace.Call> calls, long pid,
                                 int published) {
        StringBuilder md = new StringBuilder("## What a publish costs its client (issue 40)\n\n")
                .append("User-mode-Linux guest (kernel ").append(System.getProperty("os.version"))
                .append(", 1 CPU), cgroup v2. ").append(published).append(" thin 16 MiB ext4 volumes staged, ")
                .append(OTHERS).append(" published into pods of their own; the measured one (`writeBPS: 4Mi`) ")
                .append("published and unpublished ").append(ROUNDS).append(" rounds after ").append(WARMUP)
                .append(" warm-up ones into one more pod, a fresh target each round, each round ending in a ")
                .append("NodeGetCapabilities call. Driver as deployed ")
                .append("(deploy/jvm.options, info log to a file); client: grpc-java over the unix socket in ")
                .append("another JVM of the guest, one channel, a blocking stub per call; after it in each round, the ")
                .append("same three calls (a target of their own) from a client of the same JVM that writes and reads ")
                .append("HTTP/2 on its own thread (LeanGrpcClient), with no event loop or executor between.\n\n")
                .append("| ms | p50 | p90 | p99 |\n|---|---|---|---|\n")
                .append(row("**NodePublishVolume, client side**", millis(rounds.publishNanos)))
                .append(row("NodeUnpublishVolume, client side", millis(rounds.unpublishNanos)))
                .append(row("NodeGetCapabilities, client side (no work: the floor of any call)", millis(rounds.capabilitiesNanos)))
                .append(row("**NodePublishVolume, lean client** (the caller's thread writes and reads HTTP/2 itself)",
                        millis(rounds.leanPublishNanos)))
                .append(row("NodeUnpublishVolume, lean client", millis(rounds.leanUnpublishNanos)))
                .append(row("NodeGetCapabilities, lean client", millis(rounds.leanCapabilitiesNanos)))
                .append(row("NodePublishVolume, the driver's log (whole ms)", PublishReport.serverSide(log, "NodePublishVolume", 2 * ROUNDS)))
                .append(row("NodeUnpublishVolume, the driver's log (whole ms)", PublishReport.serverSide(log, "NodeUnpublishVolume", 2 * ROUNDS)))
                .append("\nSystem calls of the driver, every thread, in windows of one call each (").append(TRACED)
                .append(" of each kind) from just before the call until the driver had logged it: `strace -f -ttt -p ")
                .append("<driver>` attached once for all of them, each call counted in the window it began in; ")
                .append("`restart_syscall`, which attaching makes, left out. UML has no vDSO: `clock_gettime` is a ")
                .append("system call there, answered in user space on a normal kernel. The last row is what the ")
                .append("driver's own threads (timers, the compiler, the heap trim) do in as long with nothing asked.")
                .append("\n\n| window | system calls, median | mean | the 10 most frequent, mean per window |\n")
                .append("|---|---|---|---|\n");
        for (String method : List.of("NodePublishVolume", "NodeUnpublishVolume", "NodeGetCapabilities", IDLE)) {
            List<List<GuestStrace.Call>> split = windows.split(method, calls);
            double[] totals = split.stream().mapToDouble(List::size).toArray();
            Map<String, Long> byName = split.stream().flatMap(List::stream)
                    .collect(Collectors.groupingBy(GuestStrace.Call::name, Collectors.counting()));
            md.append("| ").append(method).append(" | ").append(String.format("%.0f", percentile(totals, 50)))
                    .append(" | ").append(String.format("%.1f", BenchReport.mean(totals))).append(" | ")
                    .append(top(byName, split.size(), 10)).append(" |\n");
        }
        List<List<GuestStrace.Call>> publishes = windows.split("NodePublishVolume", calls);
        Map<String, Long> byThread = publishes.stream().flatMap(List::stream)
                .collect(Collectors.groupingBy(c -> threadName(pid, c.tid()), Collectors.counting()));
        md.append("\nA publish's system calls by thread of the driver (mean per window): ")
                .append(top(byThread, publishes.size(), byThread.size()))
                .append(". Every call with its thread and time is in ").append(TIMELINE)
                .append(" of the guest's output directory.\n");
        return md.toString();
    }

    private static String top(Map<String, Long> counts, int windows, int limit) {
        return counts.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(limit)
                .map(e -> e.getKey() + " " + String.format("%.1f", e.getValue() / (double) windows))
                .collect(Collectors.joining(", "));
    }
}
