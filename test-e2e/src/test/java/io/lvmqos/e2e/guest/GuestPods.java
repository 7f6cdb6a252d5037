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
 * Pods as kubelet lays them out, without kubelet: a cgroup per pod in the systemd driver's
 * layout (kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_>.slice) and the
 * pod's volume directory under the kubelet directory. Workloads run inside the pod's cgroup.
 */
final class GuestPods {

    enum QosClass { GUARANTEED, BURSTABLE, BESTEFFORT }

    record Pod(String uid, Path cgroup, QosClass qos) {
        Path volumePath(String volume) {
            return GuestDriver.KUBELET.resolve("pods").resolve(uid).resolve("volumes/kubernetes.io~csi")
                    .resolve(volume).resolve("mount");
        }

        Path blockPath(String pv) {
            return GuestDriver.KUBELET.resolve("plugins/kubernetes.io/csi/volumeDevices/publish").resolve(pv).resolve(uid);
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

    static Pod create(QosClass qos) throws IOException {
        String uid = UUID.randomUUID().toString();
        String escaped = uid.replace('-', '_');
        Path hierarchy = GuestEnv.cgroupMode() == CgroupMode.V1
                ? GuestEnv.cgroupRoot().resolve("blkio") : GuestEnv.cgroupRoot();
        Path kubepods = hierarchy.resolve("kubepods.slice");
        Path cgroup = switch (qos) {
            case GUARANTEED -> kubepods.resolve("kubepods-pod" + escaped + ".slice");
            case BURSTABLE -> kubepods.resolve("kubepods-burstable.slice").resolve("kubepods-burstable-pod" + escaped + ".slice");
            case BESTEFFORT -> kubepods.resolve("kubepods-besteffort.slice").resolve("kubepods-besteffort-pod" + escaped + ".slice");
        };
        Files.createDirectories(cgroup);
        if (GuestEnv.cgroupMode() == CgroupMode.V2) {
            enableMemory(hierarchy, cgroup);
        }
        return new Pod(uid, cgroup, qos);
    }

    /** kubelet runs pods with the memory controller on; the driver itself enables only io. */
    private static void enableMemory(Path root, Path cgroup) throws IOException {
        Path parent = cgroup.getParent();
        List<Path> chain = new ArrayList<>();
        for (Path p = parent; p.startsWith(root); p = p.getParent()) {
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

    static void remove(Pod pod) {
        for (Path p = pod.cgroup(); p.getFileName().toString().contains("slice"); p = p.getParent()) {
            if (GuestCommand.run("rmdir", p.toString()).exitCode() != 0) {
                break; // a sibling is still there
            }
        }
    }

    /** Runs fio inside the pod's cgroup and returns its rate for the job's direction. */
    static Rate fio(Pod pod, String direction, List<String> jobOptions) throws IOException {
        List<String> argv = new ArrayList<>(List.of("sh", "-c", "echo $$ > " + pod.cgroup().resolve("cgroup.procs")
                + " && exec \"$@\"", "fio-in-pod", "fio", "--output-format=json", "--name=measure"));
        argv.addAll(jobOptions);
        String out = GuestCommand.run(Duration.ofMinutes(3), argv).requireSuccess().stdout();
        JsonNode job = JSON.readTree(out.substring(out.indexOf('{'))).path("jobs").get(0).path(direction);
        return new Rate(job.path("bw_bytes").asDouble(), job.path("iops").asDouble());
    }

    /** Buffered writes then fsync, timed end to end: the writeback is what io.max must catch. */
    static Rate bufferedWrite(Pod pod, Path file, int mebibytes) {
        long started = System.nanoTime();
        GuestCommand.run(Duration.ofMinutes(3), List.of("sh", "-c", "echo $$ > " + pod.cgroup().resolve("cgroup.procs")
                + " && exec \"$@\"", "dd-in-pod", "dd", "if=/dev/zero", "of=" + file, "bs=1M", "count=" + mebibytes,
                "conv=fsync", "status=none")).requireSuccess();
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
