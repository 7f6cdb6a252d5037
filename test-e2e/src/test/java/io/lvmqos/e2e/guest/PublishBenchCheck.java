package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.bench.BenchReport.ms;
import static io.lvmqos.e2e.guest.Csi2.MIB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import csi.v1.IdentityGrpc;
import csi.v1.NodeGrpc;
import io.lvmqos.cgroup.CgroupLimitsWriter;
import io.lvmqos.cgroup.CgroupLimitsWriters;
import io.lvmqos.cgroup.PodCgroups;
import io.lvmqos.device.DeviceNumber;
import io.lvmqos.e2e.CsiClient;
import io.lvmqos.e2e.bench.BenchReport;
import io.lvmqos.e2e.guest.GuestPods.Pod;
import io.lvmqos.e2e.guest.GuestPods.QosClass;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import io.lvmqos.mount.KubeletPaths;
import io.lvmqos.mount.MountTable;
import io.lvmqos.mount.Mounter;
import io.lvmqos.mount.PathMounter;
import io.lvmqos.volume.IoLimits;
import java.io.FileOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Guest side of PublishBenchmark (issue 4): NodePublishVolume and NodeUnpublishVolume over the
 * driver's socket, and beside them, in the same rounds, the kernel work of a publish done without
 * the driver: a {@code mount --bind} + {@code umount} pair by fork/exec (the baseline),
 * mount(2) and umount2(2) through the driver's own {@link Mounter}, the io.max write through
 * {@link CgroupLimitsWriter} and as one bare write(2), and the other steps publish takes (mountinfo
 * reads, path checks, the pod cgroup lookup, a gRPC round trip that does no I/O). Every variant
 * runs once per round, so that a busy host slows them all alike. After the timed rounds, what one
 * call costs the driver process in CPU time and in system calls (strace). Writes {@value #REPORT}.md
 * into the guest's output directory; it measures and reports, it does not assert times.
 */
public class PublishBenchCheck {

    public static final String REPORT = "publish";

    static final int WARMUP = 50;
    static final int ROUNDS = 200;
    private static final long WRITE_BPS = 8L << 20;
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(30);
    /** Calls per phase of the CPU accounting (one tick of CPU time is 10 ms). */
    private static final int PER_PHASE = 100;
    /** Calls per traced phase: short, so that a health check (every 10 s) seldom falls into it. */
    private static final int TRACED = 30;

    @BeforeAll
    static void onlyInTheGuest() {
        GuestEnv.assumeInGuest();
    }

    @Test
    void publishAndUnpublishBesideTheKernelWorkAlone() throws Exception {
        assertEquals(CgroupMode.V2, GuestEnv.cgroupMode(), "the publish benchmark measures io.max: boot with cgroup v2");
        Path gcLog = GuestEnv.outDir().resolve("driver-publish-gc.log");
        Path driverLog = GuestEnv.outDir().resolve("driver-publish-bench.log");
        try (GuestDriver driver = GuestDriver.start(GuestDriver.Options.standard().log(driverLog).awaitingReady()
                .jvmFlags(List.of("-Xlog:gc:file=" + gcLog,
                        // each call's steps and their times, one debug line per call
                        "-Dorg.slf4j.simpleLogger.log.io.lvmqos.node.NodeService=debug")))) {
            CsiClient client = driver.client();
            Csi.Volume volume = client.controller().createVolume(Csi2.create("bench-publish", 64 * MIB,
                    Map.of("writeBPS", "8Mi")).build()).getVolume();
            try {
                Csi.VolumeCapability capability = Csi2.mount("ext4", Csi.VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER);
                Path staging = GuestDriver.KUBELET.resolve("plugins/kubernetes.io/csi/lvmqos.csi.io/bench-publish/globalmount");
                client.node().nodeStageVolume(Csi.NodeStageVolumeRequest.newBuilder()
                        .setVolumeId(volume.getVolumeId()).setStagingTargetPath(staging.toString())
                        .setVolumeCapability(capability).build());
                try {
                    Pod pod = GuestPods.create(QosClass.BURSTABLE);
                    try (Rounds rounds = new Rounds(client, volume, capability, staging, pod)) {
                        for (int i = 0; i < WARMUP; i++) {
                            rounds.run(i, false);
                        }
                        long gcBefore = Files.size(gcLog);
                        for (int i = WARMUP; i < WARMUP + ROUNDS; i++) {
                            rounds.run(i, true);
                        }
                        String gcDuringRounds = Files.readString(gcLog).substring((int) gcBefore);
                        String report = rounds.report(Files.readString(driverLog), gcDuringRounds);
                        // after the timed rounds: tracing and CPU accounting must not disturb them
                        report += driverCostPerCall(driver.process().process().pid(), rounds);
                        BenchReport.writeTo(GuestEnv.outDir(), REPORT, report);
                    } finally {
                        GuestPods.remove(pod);
                    }
                } finally {
                    client.node().nodeUnstageVolume(Csi.NodeUnstageVolumeRequest.newBuilder()
                            .setVolumeId(volume.getVolumeId()).setStagingTargetPath(staging.toString()).build());
                }
            } finally {
                client.controller().deleteVolume(Csi.DeleteVolumeRequest.newBuilder()
                        .setVolumeId(volume.getVolumeId()).build());
            }
            driver.process().terminate(Duration.ofSeconds(20));
        }
    }

    private interface Phase {
        void call(int index) throws IOException;

        interface Body {
            void run() throws IOException;
        }
    }

    /**
     * What one call costs the driver process: CPU time (utime + stime from /proc, over
     * {@value #PER_PHASE} calls with nothing attached), then the system calls it makes (strace -c -f
     * attached to all its threads, over {@value #TRACED} calls). System calls are what a
     * user-mode-Linux guest makes expensive, and they show what the JVM does per RPC.
     */
    private static String driverCostPerCall(long pid, Rounds rounds) throws Exception {
        Map<String, Phase> phases = new LinkedHashMap<>();
        phases.put("NodeGetCapabilities", i -> rounds.client.node()
                .nodeGetCapabilities(Csi.NodeGetCapabilitiesRequest.getDefaultInstance()));
        phases.put("Probe", i -> rounds.client.identity().probe(Csi.ProbeRequest.getDefaultInstance()));
        phases.put("NodePublishVolume + NodeUnpublishVolume", i -> rounds.driverPair(i, false));
        StringBuilder md = new StringBuilder("\nWhat one call costs the driver process (after the timed rounds; CPU ")
                .append("from /proc/<pid>/stat over ").append(PER_PHASE).append(" calls, then system calls counted ")
                .append("by `strace -c -f` on all its threads over another ").append(TRACED).append("). UML's ")
                .append("vDSO turns clock_gettime into a real system call, which a normal kernel answers in user ")
                .append("space, so those rows count calls that cost nothing there:\n\n")
                .append("| calls | wall per call (ms) | driver CPU per call (ms) | driver syscalls per call | ")
                .append("most frequent (per call) |\n|---|---|---|---|---|\n");
        int index = 10_000;
        for (Map.Entry<String, Phase> phase : phases.entrySet()) {
            long cpuBefore = cpuTicks(pid);
            long t0 = System.nanoTime();
            for (int i = 0; i < PER_PHASE; i++) {
                phase.getValue().call(index++);
            }
            double wall = (System.nanoTime() - t0) / 1e6 / PER_PHASE;
            // USER_HZ is 100: one tick is 10 ms
            double cpu = (cpuTicks(pid) - cpuBefore) * 10.0 / PER_PHASE;
            Map<String, Long> syscalls = Map.of();
            for (int attempt = 0; attempt < 3; attempt++) {
                int first = index;
                index += TRACED;
                syscalls = traced(pid, phase.getKey(), () -> {
                    for (int i = first; i < first + TRACED; i++) {
                        phase.getValue().call(i);
                    }
                });
                // a health check (every 10 s) forks lvm: the phase then counts its system calls too
                if (!syscalls.containsKey("execve")) {
                    break;
                }
            }
            long total = syscalls.getOrDefault("total", 0L);
            String top = syscalls.entrySet().stream().filter(e -> !e.getKey().equals("total"))
                    .sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(6)
                    .map(e -> e.getKey() + " " + String.format("%.1f", e.getValue() / (double) TRACED))
                    .collect(java.util.stream.Collectors.joining(", "));
            md.append("| ").append(phase.getKey()).append(" | ").append(ms(wall)).append(" | ").append(ms(cpu))
                    .append(" | ").append(String.format("%.0f", total / (double) TRACED)).append(" | ").append(top)
                    .append(syscalls.containsKey("execve") ? " (a health check's lvm ran meanwhile)" : "")
                    .append(" |\n");
        }
        return md.toString();
    }

    private static long cpuTicks(long pid) throws IOException {
        return GuestCpuTime.ticks(Files.readString(Path.of("/proc", Long.toString(pid), "stat")));
    }

    private static Map<String, Long> traced(long pid, String name, Phase.Body body) throws Exception {
        Path summary = GuestEnv.outDir().resolve("strace-" + name.replaceAll("[^A-Za-z]+", "-") + ".txt");
        return GuestStrace.count(pid, summary, body::run);
    }

    /** One round runs every variant once; {@code record} is false during the warm-up. */
    private static final class Rounds implements AutoCloseable {
        private final CsiClient client;
        private final Csi.Volume volume;
        private final Csi.VolumeCapability capability;
        private final Path staging;
        private final Pod pod;
        private final DeviceNumber device;
        private final Path mountProgram;
        private final Path umountProgram;
        private final PathMounter mounter = PathMounter.create();
        private final MountTable mountTable = new MountTable();
        private final CgroupLimitsWriter writer = CgroupLimitsWriters.forNode(GuestEnv.cgroupRoot());
        private final PodCgroups podCgroups = new PodCgroups(GuestEnv.cgroupRoot());
        private final KubeletPaths paths = new KubeletPaths(GuestDriver.KUBELET);
        private final IoLimits limits = new IoLimits(OptionalLong.empty(), OptionalLong.of(WRITE_BPS),
                OptionalLong.empty(), OptionalLong.empty());
        private final byte[] ioMaxSet;
        private final byte[] ioMaxClear;
        private final PublishSeries series = new PublishSeries(ROUNDS);

        private final Path pingPongSocket = Path.of("/tmp/bench-ping-pong.sock");
        private final ServerSocketChannel pingPongServer;
        private final SocketChannel pingPong;
        private final ByteBuffer oneByte = ByteBuffer.allocate(1);
        private final FileOutputStream logOnHostfs;
        private final FileOutputStream logOnTmpfs;
        private final byte[] logLine;

        Rounds(CsiClient client, Csi.Volume volume, Csi.VolumeCapability capability, Path staging, Pod pod)
                throws IOException {
            this.client = client;
            this.volume = volume;
            this.capability = capability;
            this.staging = staging;
            this.pod = pod;
            String[] id = volume.getVolumeId().split("/");
            this.device = DeviceNumber.of(Path.of("/dev", id[2], id[3]));
            this.mountProgram = GuestStrace.program("mount");
            this.umountProgram = GuestStrace.program("umount");
            // the line the driver writes (IoMax.line), and the all-"max" line that lifts it
            this.ioMaxSet = (device + " rbps=max wbps=" + WRITE_BPS + " riops=max wiops=max")
                    .getBytes(StandardCharsets.US_ASCII);
            this.ioMaxClear = (device + " rbps=max wbps=max riops=max wiops=max").getBytes(StandardCharsets.US_ASCII);
            // a thread of this JVM echoes one byte: the floor of a request and its answer over a unix socket
            Files.deleteIfExists(pingPongSocket);
            this.pingPongServer = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            pingPongServer.bind(UnixDomainSocketAddress.of(pingPongSocket));
            Thread.ofPlatform().daemon().name("echo").start(this::echo);
            this.pingPong = SocketChannel.open(UnixDomainSocketAddress.of(pingPongSocket));
            // the driver logs one line per RPC to a file in the run's output directory (hostfs in the guest)
            this.logOnHostfs = new FileOutputStream(GuestEnv.outDir().resolve("bench-append.log").toFile(), true);
            this.logOnTmpfs = new FileOutputStream("/tmp/bench-append.log", true);
            this.logLine = ("2026-01-01T00:00:00.000Z INFO rpc - NodePublishVolume " + volume.getVolumeId()
                    + " 5 ms OK\n").getBytes(StandardCharsets.UTF_8);
        }

        private void echo() {
            try (SocketChannel peer = pingPongServer.accept()) {
                ByteBuffer buffer = ByteBuffer.allocate(1);
                while (peer.read(buffer) > 0) {
                    buffer.flip();
                    peer.write(buffer);
                    buffer.clear();
                }
            } catch (IOException closed) {
                // the measuring side closed the socket: done
            }
        }

        @Override
        public void close() throws IOException {
            pingPong.close();
            pingPongServer.close();
            Files.deleteIfExists(pingPongSocket);
            logOnHostfs.close();
            logOnTmpfs.close();
        }

        private void record(boolean record, String name, long nanos) {
            if (record) {
                series.add(name, nanos);
            }
        }

        void run(int round, boolean record) throws IOException {
            driverPair(round, record);
            forkExecPair(round, record);
            mounterPair(round, record);
            cgroupWrites(record);
            otherSteps(round, record);
            floors(round, record);
        }

        private void driverPair(int round, boolean record) throws IOException {
            Path target = pod.volumePath("pv-" + round);
            Csi.NodePublishVolumeRequest publish = Csi.NodePublishVolumeRequest.newBuilder()
                    .setVolumeId(volume.getVolumeId()).setStagingTargetPath(staging.toString())
                    .setTargetPath(target.toString()).setVolumeCapability(capability)
                    .putAllVolumeContext(volume.getVolumeContextMap())
                    .putVolumeContext("csi.storage.k8s.io/pod.uid", pod.uid())
                    .putVolumeContext("csi.storage.k8s.io/pod.name", "bench-" + pod.uid().substring(0, 8))
                    .putVolumeContext("csi.storage.k8s.io/pod.namespace", "default")
                    .putVolumeContext("csi.storage.k8s.io/ephemeral", "false")
                    .build();
            Csi.NodeUnpublishVolumeRequest unpublish = Csi.NodeUnpublishVolumeRequest.newBuilder()
                    .setVolumeId(volume.getVolumeId()).setTargetPath(target.toString()).build();
            NodeGrpc.NodeBlockingStub node = client.node();
            long t0 = System.nanoTime();
            node.nodePublishVolume(publish);
            long t1 = System.nanoTime();
            assertTrue(limitLine().isPresent(), "after publish " + round + ", io.max limits " + device + ": " + ioMax());
            node = client.node();
            long t2 = System.nanoTime();
            node.nodeUnpublishVolume(unpublish);
            long t3 = System.nanoTime();
            assertFalse(limitLine().isPresent(), "after unpublish " + round + ", io.max no longer limits " + device
                    + ": " + ioMax());
            assertFalse(Files.exists(target), "unpublish removes " + target);
            Files.delete(target.getParent()); // kubelet removes the <pv> directory too, outside the RPC
            record(record, "publish", t1 - t0);
            record(record, "unpublish", t3 - t2);
            record(record, "driverPair", (t1 - t0) + (t3 - t2));
        }

        private void forkExecPair(int round, boolean record) throws IOException {
            Path target = pod.volumePath("exec-" + round);
            Files.createDirectories(target);
            long t0 = System.nanoTime();
            GuestCommand.run(COMMAND_TIMEOUT, List.of(mountProgram.toString(), "--bind", staging.toString(),
                    target.toString())).requireSuccess();
            long t1 = System.nanoTime();
            GuestCommand.run(COMMAND_TIMEOUT, List.of(umountProgram.toString(), target.toString())).requireSuccess();
            long t2 = System.nanoTime();
            removeTarget(target);
            record(record, "execMount", t1 - t0);
            record(record, "execUmount", t2 - t1);
            record(record, "execPair", t2 - t0);
        }

        private void mounterPair(int round, boolean record) throws IOException {
            Path target = pod.volumePath("ffi-" + round);
            Files.createDirectories(target);
            long t0 = System.nanoTime();
            mounter.bindMount(staging, target, false);
            long t1 = System.nanoTime();
            mounter.unmount(target);
            long t2 = System.nanoTime();
            removeTarget(target);
            record(record, "ffiMount", t1 - t0);
            record(record, "ffiUmount", t2 - t1);
            record(record, "ffiPair", t2 - t0);
        }

        private void cgroupWrites(boolean record) throws IOException {
            long t0 = System.nanoTime();
            writer.apply(pod.cgroup(), device, limits);
            long t1 = System.nanoTime();
            writer.remove(pod.cgroup(), device);
            long t2 = System.nanoTime();
            writeIoMax(ioMaxSet);
            long t3 = System.nanoTime();
            writeIoMax(ioMaxClear);
            long t4 = System.nanoTime();
            assertFalse(limitLine().isPresent(), "the bare io.max writes leave no limit behind: " + ioMax());
            record(record, "cgroupApply", t1 - t0);
            record(record, "cgroupRemove", t2 - t1);
            record(record, "ioMaxSet", t3 - t2);
            record(record, "ioMaxClear", t4 - t3);
        }

        private void otherSteps(int round, boolean record) {
            long t0 = System.nanoTime();
            mountTable.read();
            long t1 = System.nanoTime();
            podCgroups.require(pod.uid());
            long t2 = System.nanoTime();
            Path target = pod.volumePath("paths-" + round);
            // what publish does with its paths: check target and staging, create the target
            long t3 = System.nanoTime();
            paths.check(target);
            paths.check(staging);
            paths.createDirectory(target);
            long t4 = System.nanoTime();
            // and unpublish: check the target, remove it
            paths.check(target);
            paths.remove(target);
            long t5 = System.nanoTime();
            paths.remove(target.getParent());
            NodeGrpc.NodeBlockingStub node = client.node();
            long t6 = System.nanoTime();
            node.nodeGetCapabilities(Csi.NodeGetCapabilitiesRequest.getDefaultInstance());
            long t7 = System.nanoTime();
            IdentityGrpc.IdentityBlockingStub identity = client.identity();
            long t8 = System.nanoTime();
            identity.probe(Csi.ProbeRequest.getDefaultInstance());
            long t9 = System.nanoTime();
            record(record, "grpcProbe", t9 - t8);
            record(record, "mountinfo", t1 - t0);
            record(record, "podLookup", t2 - t1);
            record(record, "pathsPublish", t4 - t3);
            record(record, "pathsUnpublish", t5 - t4);
            record(record, "grpc", t7 - t6);
        }

        private void floors(int round, boolean record) throws IOException {
            oneByte.clear().put((byte) 1).flip();
            long t0 = System.nanoTime();
            pingPong.write(oneByte);
            oneByte.clear();
            pingPong.read(oneByte);
            long t1 = System.nanoTime();
            logOnHostfs.write(logLine);
            long t2 = System.nanoTime();
            logOnTmpfs.write(logLine);
            long t3 = System.nanoTime();
            Path target = pod.volumePath("mkdir-" + round).resolve("mount");
            Files.createDirectories(target.getParent());
            long t4 = System.nanoTime();
            Files.createDirectory(target);
            long t5 = System.nanoTime();
            Files.delete(target);
            long t6 = System.nanoTime();
            Files.delete(target.getParent());
            Files.delete(target.getParent().getParent()); // the round's <pv> directory, as kubelet removes it
            record(record, "pingPong", t1 - t0);
            record(record, "logHostfs", t2 - t1);
            record(record, "logTmpfs", t3 - t2);
            record(record, "mkdir", t5 - t4);
            record(record, "rmdir", t6 - t5);
        }

        private void removeTarget(Path target) throws IOException {
            Files.delete(target);
            Files.delete(target.getParent());
        }

        /** One write(2), as the driver writes cgroup files. */
        private void writeIoMax(byte[] line) throws IOException {
            try (FileChannel channel = FileChannel.open(pod.cgroup().resolve("io.max"), StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                channel.write(ByteBuffer.wrap(line));
            }
        }

        private String ioMax() {
            try {
                return Files.readString(pod.cgroup().resolve("io.max"));
            } catch (IOException e) {
                return "(unreadable: " + e + ")";
            }
        }

        private java.util.Optional<String> limitLine() {
            return ioMax().lines().filter(l -> l.startsWith(device + " ") && l.contains("wbps=" + WRITE_BPS)).findFirst();
        }

        String report(String driverLog, String gcLog) {
            return new PublishReport(series, mountProgram, umountProgram, mountTable.read().size())
                    .markdown(driverLog, gcLog);
        }
    }
}
