package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.create;
import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import csi.v1.Csi;
import io.lvmqos.e2e.CsiClient;
import io.lvmqos.e2e.DriverProcess;
import io.lvmqos.e2e.guest.GuestPods.Pod;
import io.lvmqos.e2e.guest.GuestPods.QosClass;
import io.lvmqos.e2e.uml.GuestCommand;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * What the io.cost checks in the qemu node share: volumes published as raw block devices into
 * kubelet-shaped pods of their own, fio run in a new container of each pod at once, the disk
 * under a volume and a cgroup's weight on it, and {@code lvmqos calibrate} run as an operator runs it.
 */
final class IoCostPods {

    static final ObjectMapper JSON = new ObjectMapper();

    private IoCostPods() {
    }

    /** A volume published into a pod of its own. */
    record Published(Csi.Volume volume, Path staging, Path target, Pod pod) {
    }

    /**
     * Creates, stages and publishes a volume into a new pod of the QoS class. A raw block volume is
     * written once in full from outside any pod: reads of a thin volume's unwritten blocks never
     * reach the disk.
     */
    static Published publish(CsiClient client, String name, Map<String, String> parameters, QosClass qos,
                             Csi.VolumeCapability capability, long bytes) throws IOException {
        Csi.Volume volume = client.controller().createVolume(create(name, bytes, parameters).build()).getVolume();
        Path staging = GuestDriver.KUBELET.resolve("plugins/kubernetes.io/csi/lvmqos.csi.io/" + name + "/globalmount");
        Files.createDirectories(staging);
        client.node().nodeStageVolume(Csi.NodeStageVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                .setStagingTargetPath(staging.toString()).setVolumeCapability(capability).build());
        Pod pod = GuestPods.create(qos);
        Path target = capability.hasBlock() ? pod.blockPath(name) : pod.volumePath(name);
        client.node().nodePublishVolume(Csi.NodePublishVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).setStagingTargetPath(staging.toString())
                .setTargetPath(target.toString()).setVolumeCapability(capability)
                .putVolumeContext("csi.storage.k8s.io/pod.uid", pod.uid()).build());
        Published p = new Published(volume, staging, target, pod);
        if (capability.hasBlock()) {
            ok("dd", "if=/dev/zero", "of=" + target, "bs=1M", "count=" + bytes / (1 << 20), "oflag=direct",
                    "status=none");
        }
        return p;
    }

    /** Unpublishes, unstages and deletes each volume and removes its pod; what fails is printed, not thrown. */
    static void removeAll(CsiClient client, List<Published> published) {
        for (Published p : published) {
            try {
                Csi2.unpublishUnstageDelete(client, p.volume().getVolumeId(), p.staging(), List.of(p.target()));
            } catch (RuntimeException e) {
                System.err.println("cleaning up " + p.volume().getVolumeId() + ": " + e);
            }
            GuestPods.remove(p.pod());
        }
        published.clear();
    }

    /** Every pod reads 4 KiB at random at once, for {@code seconds}; their IOPS in the same order. */
    static List<Double> randomReads(List<Published> pods, int seconds) throws IOException, InterruptedException {
        List<List<String>> jobs = new ArrayList<>();
        for (Published p : pods) {
            jobs.add(randomReadJob(p.target(), jobName(p), seconds));
        }
        return readIops(jobs, pods.stream().map(Published::pod).toList(), seconds);
    }

    static String jobName(Published p) {
        return p.volume().getVolumeId().replaceAll("[^A-Za-z0-9]", "");
    }

    /** 4 KiB random reads, direct, 16 in flight, after 2 s of ramp. */
    static List<String> randomReadJob(Path file, String name, int seconds) {
        return job(file, name, seconds, "randread", "4k");
    }

    /** 1 MiB sequential reads, direct, 16 in flight, after 2 s of ramp: its IOPS are MiB/s. */
    static List<String> sequentialReadJob(Path file, String name, int seconds) {
        return job(file, name, seconds, "read", "1M");
    }

    private static List<String> job(Path file, String name, int seconds, String pattern, String block) {
        return List.of("fio", "--output-format=json", "--name=" + name, "--filename=" + file, "--rw=" + pattern,
                "--bs=" + block, "--direct=1", "--ioengine=libaio", "--iodepth=16", "--size=32M", "--time_based",
                "--runtime=" + seconds, "--ramp_time=2", "--readonly");
    }

    /**
     * Runs the jobs at once, each in a new container of its pod (none: outside any pod); their rates
     * in the same order, as {@link #rates} gives them.
     */
    static List<Double> readIops(List<List<String>> jobs, List<Pod> pods, int seconds)
            throws IOException, InterruptedException {
        List<Job> all = new ArrayList<>();
        for (int i = 0; i < jobs.size(); i++) {
            List<String> argv = i < pods.size() ? pods.get(i).inNewContainer(jobs.get(i)) : jobs.get(i);
            Optional<Path> cgroup = i < pods.size() ? Optional.of(pods.get(i).cgroup()) : Optional.empty();
            String disk = cgroup.isPresent() ? wholeDiskOf(Path.of(option(jobs.get(i), "--filename"))) : "";
            all.add(new Job(jobs.get(i), cgroup, disk, fio -> process(argv)));
        }
        return rates(all, seconds);
    }

    /**
     * A fio job to run beside others: its arguments, the cgroup whose io.stat counts its I/O (none:
     * fio's own figures are taken) on which disk (MAJ:MIN), and how it is started (a process, a CRI
     * exec...), which gives its output once it ends.
     */
    record Job(List<String> fio, Optional<Path> cgroup, String disk,
               Function<List<String>, CompletableFuture<String>> start) {
    }

    /**
     * Runs the jobs at once; their rates in the same order: IOPS for a job of 4 KiB blocks, MiB/s for
     * larger blocks, of reads or, for a job that writes, of writes. When every job has a cgroup, the rates are the
     * kernel's count of each cgroup's I/O on its disk (io.stat) over one window all the jobs share,
     * from 4 s after the start to {@code seconds}: each fio starts its clock when its container is
     * up, so fio's own averages cover slightly different spans, and a pod whose span sticks out alone
     * had the whole disk then (it once read 7.00:1 for weights that gave 8.00 the run before).
     * Otherwise, and for a cgroup without io.stat, they are fio's own figures.
     */
    static List<Double> rates(List<Job> jobs, int seconds) throws IOException, InterruptedException {
        long started = System.nanoTime();
        List<CompletableFuture<String>> running = new ArrayList<>();
        for (Job job : jobs) {
            running.add(job.start().apply(job.fio()));
        }
        boolean byKernel = jobs.stream().allMatch(job -> job.cgroup().isPresent());
        List<long[]> before = new ArrayList<>();
        long windowStart = 0;
        if (byKernel) {
            TimeUnit.NANOSECONDS.sleep(started + TimeUnit.SECONDS.toNanos(4) - System.nanoTime());
            awaitEveryJobDoingIo(jobs, started + TimeUnit.SECONDS.toNanos(seconds / 2));
            windowStart = System.nanoTime();
            for (int i = 0; i < jobs.size(); i++) {
                before.add(done(jobs.get(i)));
            }
            TimeUnit.NANOSECONDS.sleep(started + TimeUnit.SECONDS.toNanos(seconds) - System.nanoTime());
        }
        List<long[]> after = new ArrayList<>();
        double window = (System.nanoTime() - windowStart) / 1e9;
        if (byKernel) {
            for (int i = 0; i < jobs.size(); i++) {
                after.add(done(jobs.get(i)));
            }
        }
        List<Double> rates = new ArrayList<>();
        for (int i = 0; i < running.size(); i++) {
            String out;
            try {
                out = running.get(i).get(seconds + 60, TimeUnit.SECONDS);
            } catch (ExecutionException | TimeoutException e) {
                throw new AssertionError("fio " + jobs.get(i).fio() + " did not finish: " + e, e);
            }
            boolean mebibytes = !option(jobs.get(i).fio(), "--bs").equals("4k");
            if (byKernel && before.get(i) != null && after.get(i) != null) {
                long[] delta = {after.get(i)[0] - before.get(i)[0], after.get(i)[1] - before.get(i)[1]};
                rates.add(mebibytes ? delta[1] / (double) (1 << 20) / window : delta[0] / window);
            } else {
                JsonNode job = JSON.readTree(out.substring(out.indexOf('{'))).path("jobs").get(0)
                        .path(writes(jobs.get(i)) ? "write" : "read");
                rates.add(mebibytes ? job.path("bw_bytes").asDouble() / (1 << 20) : job.path("iops").asDouble());
            }
        }
        return rates;
    }

    /**
     * Waits until each job's cgroup has done I/O for a second (at most until {@code deadline}): a job
     * started through a container runtime may take longer than the 4 s to begin (runc's exec under
     * emulation on a busy host took 5 s), and a window opened before it would count its neighbours
     * alone on the disk.
     */
    private static void awaitEveryJobDoingIo(List<Job> jobs, long deadline) throws IOException, InterruptedException {
        List<long[]> first = new ArrayList<>();
        for (Job job : jobs) {
            first.add(done(job));
        }
        TimeUnit.SECONDS.sleep(1);
        for (int i = 0; i < jobs.size() && System.nanoTime() < deadline; i++) {
            long[] now = done(jobs.get(i));
            if (first.get(i) != null && now != null && now[0] == first.get(i)[0]) {
                first.set(i, now);
                TimeUnit.MILLISECONDS.sleep(200);
                i = -1; // look at every job again
            }
        }
    }

    /** A process's output once it ended, having exited 0. */
    private static CompletableFuture<String> process(List<String> argv) {
        try {
            Process fio = new ProcessBuilder(argv).redirectErrorStream(true).start();
            return CompletableFuture.supplyAsync(() -> {
                try {
                    String out = new String(fio.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                    assertEquals(0, fio.waitFor(), out);
                    return out;
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + argv, e);
        }
    }

    private static boolean writes(Job job) {
        return option(job.fio(), "--rw").contains("write");
    }

    private static long[] done(Job job) throws IOException {
        return ioStat(job.cgroup().orElseThrow(), job.disk(), writes(job) ? "w" : "r");
    }

    /** A job's {@code --name=value}. */
    private static String option(List<String> job, String name) {
        return job.stream().filter(arg -> arg.startsWith(name + "=")).findFirst()
                .map(arg -> arg.substring(name.length() + 1)).orElseThrow();
    }

    /**
     * The operations and bytes io.stat counts for the cgroup on the disk (MAJ:MIN) in one direction
     * ({@code r} or {@code w}); null where the cgroup has no io.stat (a pod whose QoS slice does not
     * enable io below it).
     */
    private static long[] ioStat(Path cgroup, String disk, String direction) throws IOException {
        Path stat = cgroup.resolve("io.stat");
        if (!Files.exists(stat)) {
            return null;
        }
        for (String line : Files.readAllLines(stat)) {
            if (line.startsWith(disk + " ")) {
                long ios = 0;
                long bytes = 0;
                for (String field : line.split(" ")) {
                    if (field.startsWith(direction + "ios=")) {
                        ios = Long.parseLong(field.substring(direction.length() + "ios=".length()));
                    } else if (field.startsWith(direction + "bytes=")) {
                        bytes = Long.parseLong(field.substring(direction.length() + "bytes=".length()));
                    }
                }
                return new long[] {ios, bytes};
            }
        }
        return new long[] {0, 0};
    }

    /** The disk under the volume: its device number, then device-mapper's slaves in sysfs down to a disk. */
    static String diskOf(Published p) {
        return wholeDiskOf(p.target());
    }

    /** The whole disk (MAJ:MIN) under a block device node, through device-mapper's slaves in sysfs. */
    static String wholeDiskOf(Path deviceNode) {
        String[] hex = ok("stat", "-L", "-c", "%t %T", deviceNode.toString()).strip().split(" ");
        Path at = Path.of("/sys/dev/block", Integer.parseInt(hex[0], 16) + ":" + Integer.parseInt(hex[1], 16));
        while (true) {
            List<String> slaves = ok("ls", at.resolve("slaves").toString()).lines().filter(l -> !l.isBlank()).toList();
            if (slaves.isEmpty()) {
                return ok("cat", at.resolve("dev").toString()).strip();
            }
            at = Path.of("/sys/class/block", slaves.getFirst());
        }
    }

    /** The cgroup's own weight on the disk, or null when it has no line for it (or is gone). */
    static String weightLine(Path cgroup, String disk) throws IOException {
        if (!Files.exists(cgroup.resolve("io.weight"))) {
            return null;
        }
        for (String line : Files.readAllLines(cgroup.resolve("io.weight"))) {
            String[] f = line.strip().split("\\s+");
            if (f.length == 2 && f[0].equals(disk)) {
                return f[1];
            }
        }
        return null;
    }

    /** {@code lvmqos calibrate} run as the operator runs it: the driver's jar with the deployed JVM options. */
    static GuestCommand.Result calibrate(String... args) throws IOException {
        List<String> argv = new ArrayList<>(List.of(DriverProcess.javaBinary().toString()));
        argv.addAll(DriverProcess.shippedJvmFlags());
        argv.addAll(List.of("-jar", DriverProcess.jar().toString(), "calibrate"));
        argv.addAll(List.of(args));
        return GuestCommand.run(Duration.ofMinutes(10), argv);
    }
}
