package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.guest.Csi2.create;
import static io.lvmqos.e2e.guest.Csi2.expectCode;
import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.grpc.Status;
import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * SnapshotMetadata against the ground truth, in the guest: what a thin volume's writes and discards
 * changed between two snapshots, and what a snapshot has allocated, compared chunk by chunk with
 * the writes made and with the bytes a read of the snapshot finds.
 */
public class SnapshotMetadataCheck {

    @RegisterExtension
    static final DriverForTheClass driver = new DriverForTheClass();
    private final List<String> volumes = new ArrayList<>();
    private final List<String> snapshots = new ArrayList<>();

    @AfterEach
    void deleteWhatTheTestMade() {
        Csi2.deleteAll(driver.client(), snapshots, volumes);
    }

    private Csi.Volume createVolume(String name, long bytes, Map<String, String> parameters) {
        Csi.Volume volume = driver.client().controller().createVolume(create(name, bytes, parameters).build()).getVolume();
        volumes.add(volume.getVolumeId());
        return volume;
    }

    private String snapshot(String name, Csi.Volume source) {
        String id = driver.client().controller().createSnapshot(Csi.CreateSnapshotRequest.newBuilder().setName(name)
                .setSourceVolumeId(source.getVolumeId()).build()).getSnapshot().getSnapshotId();
        snapshots.add(0, id);
        return id;
    }

    private static String lv(String id) {
        String[] parts = id.split("/");
        return parts[2] + "/" + parts[3];
    }

    private static long chunkBytes() {
        return Long.parseLong(ok("lvm", "lvs", "--noheadings", "--units", "b", "--nosuffix", "-o", "chunk_size",
                GuestEnv.volumeGroup() + "/" + GuestEnv.thinPool().orElseThrow()).strip());
    }

    private static void write(String lvId, long offset, int length) throws IOException {
        byte[] pattern = new byte[length];
        Arrays.fill(pattern, (byte) 0xA5);
        try (FileChannel device = FileChannel.open(Path.of("/dev/" + lv(lvId)), StandardOpenOption.WRITE)) {
            device.write(ByteBuffer.wrap(pattern), offset);
            device.force(true);
        }
    }

    /** The chunks that a list of byte ranges covers, checking that each range is whole chunks. */
    private static TreeSet<Long> chunks(List<Csi.BlockMetadata> ranges, long chunk, long capacity) {
        TreeSet<Long> covered = new TreeSet<>();
        for (Csi.BlockMetadata range : ranges) {
            assertEquals(0, range.getByteOffset() % chunk, "ranges start on a chunk: " + range);
            assertTrue(range.getSizeBytes() % chunk == 0 || range.getByteOffset() + range.getSizeBytes() == capacity,
                    "ranges are whole chunks: " + range);
            for (long c = range.getByteOffset() / chunk; c * chunk < range.getByteOffset() + range.getSizeBytes(); c++) {
                assertTrue(covered.add(c), "chunk " + c + " listed twice");
            }
        }
        return covered;
    }

    private static List<Csi.BlockMetadata> delta(String base, String target, long start, int max) {
        List<Csi.BlockMetadata> ranges = new ArrayList<>();
        Iterator<Csi.GetMetadataDeltaResponse> stream = driver.client().snapshotMetadata()
                .withDeadlineAfter(120, TimeUnit.SECONDS).getMetadataDelta(Csi.GetMetadataDeltaRequest.newBuilder()
                        .setBaseSnapshotId(base).setTargetSnapshotId(target).setStartingOffset(start)
                        .setMaxResults(max).build());
        stream.forEachRemaining(page -> {
            assertEquals(Csi.BlockMetadataType.VARIABLE_LENGTH, page.getBlockMetadataType());
            assertTrue(max == 0 || page.getBlockMetadataCount() <= max, "max_results " + max + " honoured");
            ranges.addAll(page.getBlockMetadataList());
        });
        return ranges;
    }

    private static List<Csi.BlockMetadata> allocated(String snapshot, long start, int max) {
        List<Csi.BlockMetadata> ranges = new ArrayList<>();
        driver.client().snapshotMetadata().withDeadlineAfter(120, TimeUnit.SECONDS).getMetadataAllocated(
                Csi.GetMetadataAllocatedRequest.newBuilder().setSnapshotId(snapshot).setStartingOffset(start)
                        .setMaxResults(max).build()).forEachRemaining(page -> {
                            assertTrue(max == 0 || page.getBlockMetadataCount() <= max);
                            ranges.addAll(page.getBlockMetadataList());
                        });
        return ranges;
    }

    /** The chunks of a snapshot in which a read finds any non-zero byte. */
    private static TreeSet<Long> nonZeroChunks(String snapshot, long chunk, long capacity) throws IOException {
        String lv = lv(snapshot);
        ok("lvm", "lvchange", "--activate", "y", "--ignoreactivationskip", lv);
        TreeSet<Long> found = new TreeSet<>();
        try (FileChannel device = FileChannel.open(Path.of("/dev/" + lv), StandardOpenOption.READ)) {
            ByteBuffer buffer = ByteBuffer.allocate((int) chunk);
            for (long c = 0; c * chunk < capacity; c++) {
                buffer.clear();
                while (buffer.hasRemaining() && device.read(buffer, c * chunk + buffer.position()) > 0) {
                    // read the whole chunk
                }
                for (int i = 0; i < buffer.position(); i++) {
                    if (buffer.get(i) != 0) {
                        found.add(c);
                        break;
                    }
                }
            }
        } finally {
            ok("lvm", "lvchange", "--activate", "n", lv);
        }
        return found;
    }

    @Test
    void theDeltaListsExactlyTheChunksWrittenAndAllocatedMatchesWhatAReadFinds() throws Exception {
        long chunk = chunkBytes();
        Csi.Volume volume = createVolume("cbt", 64 * MIB, Map.of("lvmType", "thin"));
        String id = volume.getVolumeId();
        write(id, 2 * chunk, (int) (3 * chunk));          // chunks 2, 3, 4
        write(id, 10 * chunk, (int) chunk);               // chunk 10
        write(id, 20 * chunk + 512, 4096);                // part of chunk 20
        String s1 = snapshot("cbt-s1", volume);

        write(id, 5 * chunk + 100, 200);                  // inside one chunk: 5
        write(id, 8 * chunk - 1000, 2000);                // spanning chunks 7 and 8
        write(id, 3 * chunk + 4096, 4096);                // a chunk s1 already had: 3
        ok("blkdiscard", "--offset", Long.toString(10 * chunk), "--length", Long.toString(chunk), "/dev/" + lv(id));
        String s2 = snapshot("cbt-s2", volume);

        List<Csi.BlockMetadata> changed = delta(s1, s2, 0, 0);
        printExchange(s1, s2);
        assertEquals(new TreeSet<>(List.of(3L, 5L, 7L, 8L, 10L)), chunks(changed, chunk, volume.getCapacityBytes()),
                "the chunks written or discarded between s1 and s2, and no others: " + changed);

        TreeSet<Long> allocated = chunks(allocated(s2, 0, 0), chunk, volume.getCapacityBytes());
        assertEquals(new TreeSet<>(List.of(2L, 3L, 4L, 5L, 7L, 8L, 20L)), allocated);
        assertEquals(nonZeroChunks(s2, chunk, volume.getCapacityBytes()), allocated,
                "allocated chunks are exactly those a read finds non-zero");
    }

    @Test
    void pagesHonourMaxResultsAndResumeFromAStartingOffset() throws Exception {
        long chunk = chunkBytes();
        Csi.Volume volume = createVolume("pages", 32 * MIB, Map.of("lvmType", "thin"));
        String s1 = snapshot("pages-s1", volume);
        for (long c = 0; c < 40; c += 2) {
            write(volume.getVolumeId(), c * chunk, 512);
        }
        String s2 = snapshot("pages-s2", volume);

        List<Csi.BlockMetadata> whole = delta(s1, s2, 0, 0);
        assertEquals(20, whole.size(), "twenty separate chunks: " + whole);
        assertEquals(whole, delta(s1, s2, 0, 3), "pages of three carry the same ranges");
        assertEquals(whole.subList(7, 20), delta(s1, s2, whole.get(7).getByteOffset(), 3), "resumed at the 8th");
        assertEquals(whole.subList(8, 20), delta(s1, s2, whole.get(7).getByteOffset() + chunk, 0),
                "an offset in a gap resumes at the next range");
        assertEquals(whole.subList(7, 20), delta(s1, s2, whole.get(7).getByteOffset() + 100, 0),
                "an offset inside a chunk starts at that chunk");
        assertEquals(allocated(s2, 0, 0), allocated(s2, 0, 1));
    }

    @Test
    void wrongIdsAreNotFoundInvalidArgumentOrFailedPrecondition() {
        Csi.Volume thin = createVolume("ids-a", 16 * MIB, Map.of("lvmType", "thin"));
        Csi.Volume other = createVolume("ids-b", 16 * MIB, Map.of("lvmType", "thin"));
        Csi.Volume linear = createVolume("ids-linear", 16 * MIB, Map.of());
        String a = snapshot("ids-a-s", thin);
        String b = snapshot("ids-b-s", other);

        expectCode(Status.Code.NOT_FOUND, () -> allocated("lvmqos-snap/guest-node/lvmqos/snap_gone_0", 0, 0));
        expectCode(Status.Code.NOT_FOUND, () -> allocated("nonsense", 0, 0));
        expectCode(Status.Code.NOT_FOUND, () -> delta(a, "lvmqos-snap/guest-node/lvmqos/snap_gone_0", 0, 0));
        expectCode(Status.Code.INVALID_ARGUMENT, () -> allocated("", 0, 0));
        expectCode(Status.Code.INVALID_ARGUMENT, () -> allocated(a, 0, -1));
        String mixed = expectCode(Status.Code.INVALID_ARGUMENT, () -> delta(a, b, 0, 0)).getStatus().getDescription();
        assertTrue(mixed.contains("not snapshots of one volume"), mixed);
        String needsThin = expectCode(Status.Code.FAILED_PRECONDITION, () -> allocated(linear.getVolumeId(), 0, 0))
                .getStatus().getDescription();
        assertTrue(needsThin.contains("needs a thin LV"), needsThin);
        expectCode(Status.Code.OUT_OF_RANGE, () -> allocated(a, 16 * MIB, 0));
    }

    @Test
    void aReadCutByItsDeadlineAndAReservationLeftByACrashAreBothReleased() throws Exception {
        Csi.Volume volume = createVolume("release", 16 * MIB, Map.of("lvmType", "thin"));
        write(volume.getVolumeId(), 0, 4096);
        String s1 = snapshot("release-s1", volume);

        expectCode(Status.Code.DEADLINE_EXCEEDED, () -> driver.client().snapshotMetadata()
                .withDeadlineAfter(1, TimeUnit.MILLISECONDS).getMetadataAllocated(Csi.GetMetadataAllocatedRequest
                        .newBuilder().setSnapshotId(s1).build()).forEachRemaining(page -> { }));
        awaitNoHeldMetadataSnapshot();
        assertEquals(1, allocated(s1, 0, 0).size(), "the next read reserves again");

        String tpool = GuestEnv.volumeGroup().replace("-", "--") + "-" + GuestEnv.thinPool().orElseThrow() + "-tpool";
        driver.kill();
        ok("dmsetup", "message", tpool, "0", "reserve_metadata_snap");
        assertTrue(heldMetadataSnapshot(), "a crashed reader's reservation: " + ok("dmsetup", "status", tpool));
        driver.restart();
        awaitNoHeldMetadataSnapshot();
        assertEquals(1, allocated(s1, 0, 0).size());
    }

    private static boolean heldMetadataSnapshot() {
        String tpool = GuestEnv.volumeGroup().replace("-", "--") + "-" + GuestEnv.thinPool().orElseThrow() + "-tpool";
        // thin-pool status: transaction, metadata used/total, data used/total, held metadata root ('-' for none), ...
        String[] fields = ok("dmsetup", "status", tpool).strip().split("\\s+");
        return !fields[6].equals("-");
    }

    private static void awaitNoHeldMetadataSnapshot() throws InterruptedException {
        for (int attempt = 0; attempt < 600 && heldMetadataSnapshot(); attempt++) {
            Thread.sleep(100);
        }
        assertTrue(!heldMetadataSnapshot(), "the metadata snapshot was released: "
                + GuestCommand.run("dmsetup", "status").stdout());
    }

    /** One real exchange, in protobuf's text form, for docs/changed-blocks.md. */
    private static void printExchange(String base, String target) {
        Csi.GetMetadataDeltaRequest request = Csi.GetMetadataDeltaRequest.newBuilder().setBaseSnapshotId(base)
                .setTargetSnapshotId(target).setMaxResults(4).build();
        StringBuilder text = new StringBuilder("GetMetadataDelta exchange\n> ").append(
                com.google.protobuf.TextFormat.printer().shortDebugString(request)).append('\n');
        driver.client().snapshotMetadata().withDeadlineAfter(60, TimeUnit.SECONDS).getMetadataDelta(request)
                .forEachRemaining(page -> text.append("< ").append(com.google.protobuf.TextFormat.printer()
                        .shortDebugString(page)).append('\n'));
        System.out.print(text);
    }
}
