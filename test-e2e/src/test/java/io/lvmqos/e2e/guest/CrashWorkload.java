package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.guest.Csi2.create;
import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import com.google.protobuf.Message;
import csi.v1.Csi;
import io.lvmqos.e2e.CsiClient;
import io.lvmqos.e2e.guest.GuestPods.CgroupDriver;
import io.lvmqos.e2e.guest.GuestPods.Pod;
import io.lvmqos.e2e.guest.GuestPods.QosClass;
import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

/**
 * The seeded workload of {@link CrashStatesCheck}, run by the driver on a volume group whose PV is
 * the dm-log-writes device {@value #LOG_DEVICE}: thin and linear creates, a snapshot and a clone of
 * it, a group snapshot, an expansion, a limit change, deletes (the linear one wiped), and a pod
 * writing fsynced files into a published volume.
 *
 * <p>Every step {@code n} puts a mark {@code s<n>} into the write log before it starts and
 * {@code d<n>} once it has answered (the file steps: once fsync returned), then journals, on a disk
 * the log does not cover, what it promised: the request (to retry it), every LV of the group with
 * its tags as lvm lists them now, a file's checksum, a pod's io.max line. A state replayed up to a
 * flush point after {@code d<n>} must hold what step n promised: the target logs every write that
 * completed before a flush ahead of that flush, and the marks are logged in the order they are made.
 */
final class CrashWorkload {
    static final String LOG_DEVICE = "crash-log";

    /** A step of the workload, any of whose calls may throw. */
    private interface Step {
        void run() throws Exception;
    }

    private record Published(String volumeId, Pod pod, Path staging, Path target) {
    }

    private final CsiClient client;
    private final Random random;
    private final RebootJournal journal;
    private final String vg = GuestEnv.volumeGroup();
    private int step;

    CrashWorkload(CsiClient client, long seed, RebootJournal journal) {
        this.client = client;
        this.random = new Random(seed);
        this.journal = journal;
    }

    /** Step 0: the volume group and its pool are made; the states worth checking start here. */
    static void setUpDone(RebootJournal journal, String vg) {
        mark("s0");
        mark("d0");
        journal.append(lvsLine(0, vg));
    }

    void run() throws Exception {
        String firstWbps = pick("4Mi", "8Mi", "16Mi");
        Csi.Volume a = createVolume(create("crash-a", 64 * MIB, Map.of("lvmType", "thin", "writeBPS", firstWbps)));
        Csi.Volume b = createVolume(create("crash-b", (24 + 8 * random.nextInt(2)) * MIB,
                Map.of("writeIOPS", pick("200", "400"))));
        Csi.Volume c = createVolume(create("crash-c", 32 * MIB, Map.of("lvmType", "thin")));
        Published published = stageAndPublish(a);
        for (int i = 1 + random.nextInt(3); i > 0; i--) {
            writeFile(published);
        }
        List<String> snapshots = new ArrayList<>();
        List<String> clones = new ArrayList<>();
        List<Step> middle = new ArrayList<>(List.of(
                () -> {
                    Csi.Snapshot snapshot = ((Csi.CreateSnapshotResponse) controller(CrashOp.CREATE_SNAPSHOT,
                            Csi.CreateSnapshotRequest.newBuilder().setName("crash-snap")
                                    .setSourceVolumeId(a.getVolumeId()).build())).getSnapshot();
                    snapshots.add(snapshot.getSnapshotId());
                    clones.add(createVolume(create("crash-clone", 64 * MIB, Map.of("lvmType", "thin"))
                            .setVolumeContentSource(Csi.VolumeContentSource.newBuilder().setSnapshot(
                                    Csi.VolumeContentSource.SnapshotSource.newBuilder()
                                            .setSnapshotId(snapshot.getSnapshotId())))).getVolumeId());
                },
                () -> controller(CrashOp.CREATE_GROUP_SNAPSHOT, Csi.CreateVolumeGroupSnapshotRequest.newBuilder()
                        .setName("crash-group").addSourceVolumeIds(a.getVolumeId())
                        .addSourceVolumeIds(c.getVolumeId()).build()),
                () -> controller(CrashOp.EXPAND_VOLUME, Csi.ControllerExpandVolumeRequest.newBuilder()
                        .setVolumeId(b.getVolumeId()).setVolumeCapability(Csi2.mount())
                        .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(48 * MIB)).build())));
        Collections.shuffle(middle, random);
        for (Step s : middle) {
            s.run();
        }
        changeLimit(published, firstWbps.equals("8Mi") ? "4Mi" : "8Mi");
        writeFile(published);
        controller(CrashOp.DELETE_VOLUME, Csi.DeleteVolumeRequest.newBuilder().setVolumeId(b.getVolumeId()).build());
        for (String clone : clones) {
            controller(CrashOp.DELETE_VOLUME, Csi.DeleteVolumeRequest.newBuilder().setVolumeId(clone).build());
        }
        for (String snapshot : snapshots) {
            controller(CrashOp.DELETE_SNAPSHOT, Csi.DeleteSnapshotRequest.newBuilder().setSnapshotId(snapshot).build());
        }
        node("unpublish", () -> {
            client.node().nodeUnpublishVolume(Csi.NodeUnpublishVolumeRequest.newBuilder()
                    .setVolumeId(published.volumeId()).setTargetPath(published.target().toString()).build());
            client.node().nodeUnstageVolume(Csi.NodeUnstageVolumeRequest.newBuilder()
                    .setVolumeId(published.volumeId()).setStagingTargetPath(published.staging().toString()).build());
            GuestPods.remove(published.pod());
        });
        System.out.println("crash workload: " + step + " steps, seed-chosen first limit " + firstWbps);
    }

    private Csi.Volume createVolume(Csi.CreateVolumeRequest.Builder request) {
        return ((Csi.CreateVolumeResponse) controller(CrashOp.CREATE_VOLUME, request.build())).getVolume();
    }

    /** One controller call as a step: marked, answered, journalled with its request and the LVs after it. */
    private Message controller(CrashOp op, Message request) {
        int n = ++step;
        mark("s" + n);
        Message answer = op.send(client, request);
        mark("d" + n);
        journal.append("op", Integer.toString(n), op.name(), CrashOp.journalWord(request));
        journal.append(lvsLine(n, vg));
        return answer;
    }

    /** A node-side step: marked and journalled like a controller call, but never retried. */
    private int node(String what, Step body) throws Exception {
        int n = ++step;
        mark("s" + n);
        body.run();
        mark("d" + n);
        journal.append("node", Integer.toString(n), what);
        journal.append(lvsLine(n, vg));
        return n;
    }

    private Published stageAndPublish(Csi.Volume volume) throws Exception {
        Path staging = GuestDriver.KUBELET.resolve("plugins/kubernetes.io/csi/lvmqos.csi.io/crash-a/globalmount");
        Pod pod = GuestPods.create(UUID.randomUUID().toString(), QosClass.BURSTABLE, CgroupDriver.SYSTEMD, "");
        Path target = pod.volumePath("pv-crash-a");
        int n = node("publish", () -> {
            client.node().nodeStageVolume(Csi.NodeStageVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                    .setStagingTargetPath(staging.toString()).setVolumeCapability(Csi2.mount()).build());
            client.node().nodePublishVolume(RebootAfterCheck.publishRequest(volume.getVolumeId(), staging, target,
                    pod.uid()));
        });
        journal.append("staged", Integer.toString(n), volume.getVolumeId(), staging.toString(), target.toString());
        journal.append("limit", Integer.toString(n), ioMax(pod, volume.getVolumeId()));
        return new Published(volume.getVolumeId(), pod, staging, target);
    }

    private void changeLimit(Published published, String wbps) throws Exception {
        String before = ioMax(published.pod(), published.volumeId());
        Message answer = controller(CrashOp.MODIFY_VOLUME, Csi.ControllerModifyVolumeRequest.newBuilder()
                .setVolumeId(published.volumeId()).putMutableParameters("writeBPS", wbps).build());
        String after = ioMax(published.pod(), published.volumeId());
        assertNotEquals(before, after, "the live pod's io.max changed with the modify: " + answer);
        journal.append("limit", Integer.toString(step), after);
    }

    private void writeFile(Published published) throws Exception {
        String name = "file-" + (step + 1);
        Path file = published.target().resolve(name);
        int size = 64 * (1 + random.nextInt(16));
        int n = node("file", () -> GuestCommand.run(Duration.ofMinutes(1), published.pod().inNewContainer(List.of(
                "dd", "if=/dev/urandom", "of=" + file, "bs=1k", "count=" + size, "conv=fsync", "status=none")))
                .requireSuccess());
        journal.append("file", Integer.toString(n), name, ok("sha256sum", file.toString()).split(" ")[0]);
    }

    private String pick(String... choices) {
        return choices[random.nextInt(choices.length)];
    }

    /** Inserts a named mark into the write log, after everything logged so far. */
    static void mark(String name) {
        ok("dmsetup", "message", LOG_DEVICE, "0", "mark", name);
    }

    /** The journal line {@code lvs <n> <lv>:<tags>...} of every LV but the pool and its hidden parts. */
    static String[] lvsLine(int n, String vg) {
        List<String> words = new ArrayList<>(List.of("lvs", Integer.toString(n)));
        userLvTags(vg).forEach((lv, tags) -> words.add(lv + ":" + tags));
        return words.toArray(String[]::new);
    }

    /** Every LV of the group but the pool and its hidden parts, with its tags (comma-separated, sorted by lvm). */
    static Map<String, String> userLvTags(String vg) {
        Map<String, String> lvs = new LinkedHashMap<>();
        for (String line : ok("lvm", "lvs", "--noheadings", "--separator", "|", "-o", "lv_name,lv_attr,lv_tags", vg)
                .lines().toList()) {
            String[] fields = line.strip().split("\\|", -1);
            if (fields.length == 3 && !fields[1].startsWith("t")) {
                lvs.put(fields[0], fields[2]);
            }
        }
        return lvs;
    }

    /** The pod's io.max line for the volume's device, without the device number, spaces as commas. */
    static String ioMax(Pod pod, String volumeId) throws IOException {
        String vg = volumeId.split("/")[2];
        String[] parts = ok("stat", "-L", "-c", "%t:%T", "/dev/" + vg + "/" + Csi2.lvName(volumeId)).strip().split(":");
        String number = Integer.parseInt(parts[0], 16) + ":" + Integer.parseInt(parts[1], 16);
        return ok("cat", pod.cgroup().resolve("io.max").toString()).lines()
                .filter(line -> line.startsWith(number + " ")).findFirst()
                .map(line -> line.substring(number.length() + 1).strip().replace(' ', ','))
                .orElse("none");
    }
}
