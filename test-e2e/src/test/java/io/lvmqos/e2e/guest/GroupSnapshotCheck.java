package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.guest.Csi2.create;
import static io.lvmqos.e2e.guest.Csi2.expectCode;
import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.grpc.Status;
import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Group snapshots in the guest: two mounted thin volumes, a writer that writes a sequence number to
 * A and then to B, continuously; group snapshots restored into two new volumes must never show B
 * ahead of A. Snapshots taken one after the other without the freeze can.
 */
public class GroupSnapshotCheck {

    @RegisterExtension
    static final DriverForTheClass driver = new DriverForTheClass();
    private final List<Runnable> cleanup = new ArrayList<>();

    @AfterEach
    void undo() {
        cleanup.reversed().forEach(Runnable::run);
    }

    private Csi.Volume volume(Csi.CreateVolumeRequest request) {
        Csi.Volume volume = driver.client().controller().createVolume(request).getVolume();
        cleanup.add(() -> driver.client().controller().deleteVolume(Csi.DeleteVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).build()));
        return volume;
    }

    private Path stage(Csi.Volume volume) {
        return Csi2.stage(driver::client, volume, Csi2.mount(), cleanup);
    }

    private Csi.VolumeGroupSnapshot groupSnapshot(String name, Csi.Volume... members) {
        Csi.CreateVolumeGroupSnapshotRequest.Builder request = Csi.CreateVolumeGroupSnapshotRequest.newBuilder()
                .setName(name);
        for (Csi.Volume member : members) {
            request.addSourceVolumeIds(member.getVolumeId());
        }
        Csi.VolumeGroupSnapshot group = driver.client().groupController().createVolumeGroupSnapshot(request.build())
                .getGroupSnapshot();
        cleanup.add(() -> driver.client().groupController().deleteVolumeGroupSnapshot(
                Csi.DeleteVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(group.getGroupSnapshotId()).build()));
        return group;
    }

    private static void writeNumber(FileChannel file, long n) throws java.io.IOException {
        byte[] text = String.format("%019d\n", n).getBytes(StandardCharsets.US_ASCII);
        file.write(ByteBuffer.wrap(text), 0);
    }

    private static long readNumber(Path file) throws java.io.IOException {
        return Long.parseLong(Files.readString(file).strip());
    }

    /** What the writer had written to A and B, as two volumes restored from a group snapshot show it. */
    private long[] restoredPair(String round, Csi.VolumeGroupSnapshot group) throws Exception {
        long[] pair = new long[2];
        for (Csi.Snapshot member : group.getSnapshotsList()) {
            Csi.Volume restored = volume(create(round + "-" + Csi2.lvName(member.getSourceVolumeId()), 32 * MIB,
                    Map.of("lvmType", "thin")).setVolumeContentSource(Csi.VolumeContentSource.newBuilder()
                    .setSnapshot(Csi.VolumeContentSource.SnapshotSource.newBuilder()
                            .setSnapshotId(member.getSnapshotId()))).build());
            Path mounted = stage(restored);
            String which = Files.readString(mounted.resolve("which")).strip();
            pair[which.equals("A") ? 0 : 1] = readNumber(mounted.resolve("sequence"));
        }
        return pair;
    }

    /** Writes 1, 2, 3, ... to A's file and then to B's, until stopped. */
    private static final class SequenceWriter implements AutoCloseable {
        private final AtomicBoolean stop = new AtomicBoolean();
        private final AtomicLong written = new AtomicLong();
        private final Thread thread;

        SequenceWriter(Path mountA, Path mountB) {
            thread = Thread.ofPlatform().name("sequence-writer").start(() -> {
                try (FileChannel fileA = FileChannel.open(mountA.resolve("sequence"), StandardOpenOption.CREATE,
                        StandardOpenOption.WRITE);
                     FileChannel fileB = FileChannel.open(mountB.resolve("sequence"), StandardOpenOption.CREATE,
                             StandardOpenOption.WRITE)) {
                    for (long n = 1; !stop.get(); n++) {
                        writeNumber(fileA, n);
                        writeNumber(fileB, n);
                        written.set(n);
                    }
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
        }

        void awaitMore(long count) throws InterruptedException {
            long before = written.get();
            while (written.get() < before + count) {
                Thread.sleep(10);
            }
        }

        @Override
        public void close() throws InterruptedException {
            stop.set(true);
            thread.join();
        }
    }

    private Path[] stagedPair(Csi.Volume a, Csi.Volume b) throws java.io.IOException {
        Path mountA = stage(a);
        Path mountB = stage(b);
        Files.writeString(mountA.resolve("which"), "A\n");
        Files.writeString(mountB.resolve("which"), "B\n");
        return new Path[] {mountA, mountB};
    }

    @Test
    void restoredPairsNeverShowBAheadOfA() throws Exception {
        Csi.Volume a = volume(create("seq-a", 32 * MIB, Map.of("lvmType", "thin")).build());
        Csi.Volume b = volume(create("seq-b", 32 * MIB, Map.of("lvmType", "thin")).build());
        Path[] mounts = stagedPair(a, b);
        try (SequenceWriter writer = new SequenceWriter(mounts[0], mounts[1])) {
            for (int round = 0; round < 3; round++) {
                writer.awaitMore(1000);
                Csi.VolumeGroupSnapshot group = groupSnapshot("round-" + round, a, b);
                assertEquals(2, group.getSnapshotsCount());
                group.getSnapshotsList().forEach(s -> assertEquals(group.getGroupSnapshotId(), s.getGroupSnapshotId()));
                long[] pair = restoredPair("restore-" + round, group);
                System.out.printf("GroupSnapshot round %d: restored A=%d B=%d (writer at %d)%n", round, pair[0],
                        pair[1], writer.written.get());
                assertTrue(pair[0] > 0 && pair[1] > 0, "both files were captured: " + pair[0] + ", " + pair[1]);
                assertTrue(pair[1] <= pair[0], "B (" + pair[1] + ") is never ahead of A (" + pair[0] + ")");
                assertTrue(pair[0] - pair[1] <= 1, "frozen together, A is at most the one write ahead that the"
                        + " writer was blocked in: A=" + pair[0] + " B=" + pair[1]);
            }
        }
        String log = driver.log();
        assertTrue(log.contains("2 filesystems frozen for"), "the freeze time is logged");
    }

    /** The control: what the check above would catch. Two plain snapshots, A's first, while the writer runs. */
    @Test
    void plainSnapshotsOneAfterTheOtherDoShowBAheadOfA() throws Exception {
        Csi.Volume a = volume(create("plain-a", 32 * MIB, Map.of("lvmType", "thin")).build());
        Csi.Volume b = volume(create("plain-b", 32 * MIB, Map.of("lvmType", "thin")).build());
        Path[] mounts = stagedPair(a, b);
        long[] pair = new long[2];
        try (SequenceWriter writer = new SequenceWriter(mounts[0], mounts[1])) {
            writer.awaitMore(1000);
            List<Csi.Snapshot> snapshots = new ArrayList<>();
            for (Csi.Volume member : List.of(a, b)) {
                Csi.Snapshot snapshot = driver.client().controller().createSnapshot(Csi.CreateSnapshotRequest
                        .newBuilder().setName("plain-" + Csi2.lvName(member.getVolumeId()))
                        .setSourceVolumeId(member.getVolumeId()).build()).getSnapshot();
                cleanup.add(() -> driver.client().controller().deleteSnapshot(Csi.DeleteSnapshotRequest.newBuilder()
                        .setSnapshotId(snapshot.getSnapshotId()).build()));
                snapshots.add(snapshot);
            }
            writer.awaitMore(10);
            pair = restoredPair("plain-restore", Csi.VolumeGroupSnapshot.newBuilder().addAllSnapshots(snapshots).build());
        }
        System.out.printf("Plain snapshots: restored A=%d B=%d%n", pair[0], pair[1]);
        assertTrue(pair[1] > pair[0], "without the freeze, B's later snapshot is ahead: A=" + pair[0] + " B=" + pair[1]);
    }

    @Test
    void getAndDeleteFollowTheMembersTags() {
        Csi.Volume a = volume(create("gd-a", 16 * MIB, Map.of("lvmType", "thin")).build());
        Csi.Volume b = volume(create("gd-b", 16 * MIB, Map.of("lvmType", "thin")).build());
        Csi.VolumeGroupSnapshot group = groupSnapshot("get-delete", a, b);
        assertEquals(group, groupSnapshot("get-delete", b, a), "the same request again is the same group");
        expectCode(Status.Code.ALREADY_EXISTS, () -> groupSnapshot("get-delete", a));
        Csi.VolumeGroupSnapshot got = driver.client().groupController().getVolumeGroupSnapshot(
                Csi.GetVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(group.getGroupSnapshotId()).build())
                .getGroupSnapshot();
        assertEquals(group, got);
        assertEquals(2, groupMembers(), "two LVs carry the group's tag");

        driver.client().groupController().deleteVolumeGroupSnapshot(Csi.DeleteVolumeGroupSnapshotRequest.newBuilder()
                .setGroupSnapshotId(group.getGroupSnapshotId()).build());
        expectCode(Status.Code.NOT_FOUND, () -> driver.client().groupController().getVolumeGroupSnapshot(
                Csi.GetVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(group.getGroupSnapshotId()).build()));
        assertEquals(0, groupMembers());
    }

    @Test
    void linearMembersUnknownVolumesAndMissingNamesAreRefused() {
        Csi.Volume thin = volume(create("bad-thin", 16 * MIB, Map.of("lvmType", "thin")).build());
        Csi.Volume linear = volume(create("bad-linear", 16 * MIB, Map.of()).build());
        String needsThin = expectCode(Status.Code.FAILED_PRECONDITION, () -> groupSnapshot("bad", thin, linear))
                .getStatus().getDescription();
        assertTrue(needsThin.contains("need thin volumes"), needsThin);
        expectCode(Status.Code.NOT_FOUND, () -> driver.client().groupController().createVolumeGroupSnapshot(
                Csi.CreateVolumeGroupSnapshotRequest.newBuilder().setName("bad-2")
                        .addSourceVolumeIds("lvmqos/guest-node/lvmqos/vol_gone_0").build()));
        expectCode(Status.Code.INVALID_ARGUMENT, () -> driver.client().groupController().createVolumeGroupSnapshot(
                Csi.CreateVolumeGroupSnapshotRequest.newBuilder().addSourceVolumeIds(thin.getVolumeId()).build()));
        assertEquals(0, groupMembers(), "a refused group leaves no member behind");
    }

    @Test
    void aFilesystemLeftFrozenByAKilledDriverIsThawedWhenItStartsAgain() throws Exception {
        Csi.Volume volume = volume(create("left-frozen", 16 * MIB, Map.of("lvmType", "thin")).build());
        Path mounted = stage(volume);
        String lv = GuestEnv.volumeGroup() + "/" + Csi2.lvName(volume.getVolumeId());
        driver.kill();
        // what a driver killed between its freeze and its thaw leaves: the tag, and the frozen filesystem
        ok("lvm", "lvchange", "--addtag", "lvmqos.freezing=grp_x_0", lv);
        ok("fsfreeze", "--freeze", mounted.toString());
        driver.restart();
        for (int attempt = 0; attempt < 600 && ok("lvm", "lvs", "--noheadings", "-o", "lv_tags", lv)
                .contains("lvmqos.freezing"); attempt++) {
            Thread.sleep(100);
        }
        assertFalse(ok("lvm", "lvs", "--noheadings", "-o", "lv_tags", lv).contains("lvmqos.freezing"));
        assertFalse(GuestCommand.run("fsfreeze", "--unfreeze", mounted.toString()).succeeded(),
                "the filesystem was thawed already");
        Files.writeString(mounted.resolve("after"), "writable\n");
    }

    /**
     * After a power cut nothing is active, and a volume may still carry the freezing tag of a group
     * snapshot cut short (CrashStatesIT found both, 2026-12-07): the driver's start used to fail on
     * the missing device node and leave the tag, and the group snapshot's retry answered NOT_FOUND.
     */
    @Test
    void aGroupOfInactiveVolumesAndAFreezingTagLeftOnOneAfterAPowerCut() throws Exception {
        Csi.Volume a = volume(create("inactive-a", 16 * MIB, Map.of("lvmType", "thin")).build());
        Csi.Volume b = volume(create("inactive-b", 16 * MIB, Map.of("lvmType", "thin")).build());
        String lvA = GuestEnv.volumeGroup() + "/" + Csi2.lvName(a.getVolumeId());
        String lvB = GuestEnv.volumeGroup() + "/" + Csi2.lvName(b.getVolumeId());
        driver.kill();
        ok("lvm", "lvchange", "--addtag", "lvmqos.freezing=grp_x_0", lvA);
        ok("lvm", "lvchange", "-an", lvA, lvB);
        driver.restart();
        for (int attempt = 0; attempt < 600 && ok("lvm", "lvs", "--noheadings", "-o", "lv_tags", lvA)
                .contains("lvmqos.freezing"); attempt++) {
            Thread.sleep(100);
        }
        assertFalse(ok("lvm", "lvs", "--noheadings", "-o", "lv_tags", lvA).contains("lvmqos.freezing"),
                "the start cleared the tag of a volume that is not active");
        Csi.VolumeGroupSnapshot group = groupSnapshot("inactive", a, b);
        assertEquals(2, group.getSnapshotsCount(), "a group of volumes that are not active is taken");
    }

    private static long groupMembers() {
        return ok("lvm", "lvs", "--noheadings", "-o", "lv_tags", GuestEnv.volumeGroup()).lines()
                .filter(line -> line.contains("lvmqos.group=")).count();
    }
}
