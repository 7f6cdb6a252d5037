package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.uml.GuestCommand.ok;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Pods as kubelet lays them out, without kubelet: a cgroup per pod in either cgroup driver's
 * layout (systemd: kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_>.slice;
 * cgroupfs: kubepods/burstable/pod<uid>), below kubelet's default cgroup root or another one, and
 * the pod's volume directory under the kubelet directory.
 *
 * <p>Workloads run as kubelet runs containers: each in a container cgroup of its own below the
 * pod cgroup (systemd: cri-containerd-<id>.scope; cgroupfs: <id>), made when the workload starts,
 * so after NodePublishVolume returned. No process ever runs in the pod cgroup itself; on cgroup
 * v2 the pod cgroup enables the memory controller for its children, as kubelet's does, so the
 * kernel's no-internal-processes rule would refuse one there anyway.
 */
public final class GuestPods {

    public enum QosClass { GUARANTEED, BURSTABLE, BESTEFFORT }

    /** Kubelet's --cgroup-driver. */
    enum CgroupDriver { SYSTEMD, CGROUPFS }

    public record Pod(String uid, Path cgroup, QosClass qos, CgroupDriver driver) {
        Path volumePath(String volume) {
            return GuestDriver.KUBELET.resolve("pods").resolve(uid).resolve("volumes/kubernetes.io~csi")
                    .resolve(volume).resolve("mount");
        }

        Path blockPath(String pv) {
            return GuestDriver.KUBELET.resolve("plugins/kubernetes.io/csi/volumeDevices/publish").resolve(pv).resolve(uid);
        }

        /** A new container cgroup below the pod's, named as the runtime under this driver names it. */
        Path newContainer() throws IOException {
            String id = (UUID.randomUUID().toString() + UUID.randomUUID()).replace("-", "");
            return Files.createDirectory(cgroup.resolve(driver == CgroupDriver.SYSTEMD
                    ? "cri-containerd-" + id + ".scope" : id));
        }

        /**
         * The command line that runs argv in a new container cgroup of the pod: the shell moves
         * itself there, then becomes the workload, so all of its I/O is charged there.
         *
         * <p>On cgroup v1 the driver copies the pod's throttle lines into a container cgroup a few
         * milliseconds after the cgroup appears (NodeCheck.v1TheWindowBeforeANewContainerCgroupIsLimited
         * measures that window and docs/benchmarks.md reports it). A workload started inside the
         * window does part of its I/O unlimited, and with the guest on one host CPU the shell and
         * dd start within it: an 8 MiB dd under a 4 MiB/s limit measured 5.3 MiB/s. So on v1 this
         * waits until the container holds every line of the pod's throttle files; the checks that
         * use it measure the limit, and the window has its check of its own.
         */
        List<String> inNewContainer(List<String> argv) throws IOException {
            Path container = newContainer();
            if (GuestEnv.cgroupMode() == CgroupMode.V1) {
                awaitPodLines(container);
            }
            List<String> line = new ArrayList<>(List.of("sh", "-c", "echo $$ > " + container.resolve("cgroup.procs")
                    + " && exec \"$@\"", "in-container"));
            line.addAll(argv);
            return line;
        }

        /** cgroup v1: waits up to 5 s for the driver to copy every throttle line of the pod into {@code container}. */
        void awaitPodLines(Path container) throws IOException {
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            for (String name : List.of("blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device",
                    "blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device")) {
                List<String> podLines = Files.readAllLines(cgroup.resolve(name));
                while (!Files.readAllLines(container.resolve(name)).containsAll(podLines)) {
                    if (System.nanoTime() > deadline) {
                        throw new AssertionError("5 s after " + container + " was made, its " + name + " still lacks"
                                + " the pod's lines " + podLines + ": " + Files.readAllLines(container.resolve(name)));
                    }
                    try {
                        Thread.sleep(5);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IOException("interrupted while waiting for the driver's lines in " + container, e);
                    }
                }
            }
        }
    }

    /** What fio measured: bandwidth in bytes per second and I/O operations per second. */
    record Rate(double bytesPerSecond, double iops) {
        double mibPerSecond() {
            return bytesPerSecond / (1 << 20);
        }
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    private GuestPods() {
    }

    static Path hierarchy() {
        return GuestEnv.cgroupMode() == CgroupMode.V1 ? GuestEnv.cgroupRoot().resolve("blkio") : GuestEnv.cgroupRoot();
    }

    static Pod create(QosClass qos) throws IOException {
        return create(qos, CgroupDriver.SYSTEMD);
    }

    static Pod create(QosClass qos, CgroupDriver driver) throws IOException {
        return create(UUID.randomUUID().toString(), qos, driver, "");
    }

    /**
     * A pod cgroup where kubelet with this driver and {@code --cgroup-root=/<cgroupRoot>} puts it
     * ("" for the default root, "kubelet" as kind runs it).
     */
    static Pod create(String uid, QosClass qos, CgroupDriver driver, String cgroupRoot) throws IOException {
        Path cgroup = Files.createDirectories(hierarchy().resolve(layout(uid, qos, driver, cgroupRoot)));
        if (GuestEnv.cgroupMode() == CgroupMode.V2) {
            enableMemory(hierarchy(), cgroup);
        }
        return new Pod(uid, cgroup, qos, driver);
    }

    /** The pod cgroup's path below the hierarchy, as kubelet's cgroup manager names it. */
    static String layout(String uid, QosClass qos, CgroupDriver driver, String cgroupRoot) {
        String qosName = qos.name().toLowerCase(java.util.Locale.ROOT);
        if (driver == CgroupDriver.CGROUPFS) {
            String kubepods = (cgroupRoot.isEmpty() ? "" : cgroupRoot + "/") + "kubepods";
            return qos == QosClass.GUARANTEED ? kubepods + "/pod" + uid : kubepods + "/" + qosName + "/pod" + uid;
        }
        // systemd: each path element becomes a slice whose name repeats its parents' names
        String prefix = cgroupRoot.isEmpty() ? "kubepods" : cgroupRoot + "-kubepods";
        String top = (cgroupRoot.isEmpty() ? "" : cgroupRoot + ".slice/") + prefix + ".slice";
        String escaped = uid.replace('-', '_');
        return qos == QosClass.GUARANTEED ? top + "/" + prefix + "-pod" + escaped + ".slice"
                : top + "/" + prefix + "-" + qosName + ".slice/" + prefix + "-" + qosName + "-pod" + escaped + ".slice";
    }

    /**
     * kubelet runs pods with the memory controller on, down to the pod cgroup's children; the
     * driver itself enables only io, and only above the pod cgroup.
     */
    private static void enableMemory(Path root, Path cgroup) throws IOException {
        List<Path> chain = new ArrayList<>();
        for (Path p = cgroup; p.startsWith(root); p = p.getParent()) {
            chain.addFirst(p);
            if (p.equals(root)) {
                break;
            }
        }
        for (Path p : chain) {
            String enabled = Files.readString(p.resolve("cgroup.subtree_control"));
            if (!enabled.contains("memory")) {
                Files.writeString(p.resolve("cgroup.subtree_control"), "+memory");
            }
        }
    }

    /**
     * Removes the pod's container cgroups, the pod cgroup, and the kubelet cgroups above it that
     * no other pod uses. A container's cgroup can be briefly busy after its process exited.
     */
    static void remove(Pod pod) {
        List<Path> containers = new ArrayList<>();
        try (var tree = Files.walk(pod.cgroup())) {
            tree.filter(Files::isDirectory).filter(p -> !p.equals(pod.cgroup())).forEach(containers::add);
        } catch (IOException | RuntimeException e) {
            System.err.println("listing " + pod.cgroup() + ": " + e);
        }
        for (Path container : containers.reversed()) {
            rmdir(container);
        }
        Path hierarchy = hierarchy();
        for (Path p = pod.cgroup(); p.startsWith(hierarchy) && !p.equals(hierarchy); p = p.getParent()) {
            if (!rmdir(p)) {
                break; // a sibling is still there
            }
        }
    }

    private static boolean rmdir(Path cgroup) {
        for (int attempt = 0; attempt < 50; attempt++) {
            if (GuestCommand.run("rmdir", cgroup.toString()).exitCode() == 0) {
                return true;
            }
            try (var entries = Files.list(cgroup)) {
                if (entries.anyMatch(Files::isDirectory)) {
                    return false; // not empty: another pod's or container's cgroup below
                }
            } catch (IOException gone) {
                return true;
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return false;
    }

    /** Runs fio in a new container cgroup of the pod and returns its rate for the job's direction. */
    static Rate fio(Pod pod, String direction, List<String> jobOptions) throws IOException {
        List<String> argv = new ArrayList<>(List.of("fio", "--output-format=json", "--name=measure"));
        argv.addAll(jobOptions);
        String out = GuestCommand.run(Duration.ofMinutes(3), pod.inNewContainer(argv)).requireSuccess().stdout();
        JsonNode job = JSON.readTree(out.substring(out.indexOf('{'))).path("jobs").get(0).path(direction);
        return new Rate(job.path("bw_bytes").asDouble(), job.path("iops").asDouble());
    }

    /** Buffered writes then fsync, timed end to end: the writeback is what io.max must catch. */
    static Rate bufferedWrite(Pod pod, Path file, int mebibytes) throws IOException {
        List<String> argv = pod.inNewContainer(List.of("dd", "if=/dev/zero", "of=" + file, "bs=1M",
                "count=" + mebibytes, "conv=fsync", "status=none"));
        long started = System.nanoTime();
        GuestCommand.run(Duration.ofMinutes(3), argv).requireSuccess();
        double seconds = (System.nanoTime() - started) / 1e9;
        return new Rate(mebibytes * (double) (1 << 20) / seconds, 0);
    }

    static List<String> sequential(String rw, Path file, String size, boolean direct) {
        return List.of("--filename=" + file, "--rw=" + rw, "--bs=1M", "--size=" + size, "--direct=" + (direct ? 1 : 0),
                "--ioengine=psync", "--time_based", "--runtime=4", "--ramp_time=1", "--end_fsync=" + (direct ? 0 : 1));
    }

    static List<String> random4k(String rw, Path file, String size) {
        return List.of("--filename=" + file, "--rw=" + rw, "--bs=4k", "--size=" + size, "--direct=1",
                "--ioengine=psync", "--time_based", "--runtime=4", "--ramp_time=1");
    }

    /** Writes a file outside any pod cgroup, so that read tests find it laid out at full speed. */
    static void layOut(Path file, int mebibytes) {
        ok("dd", "if=/dev/zero", "of=" + file, "bs=1M", "count=" + mebibytes, "oflag=direct", "status=none");
    }
}
