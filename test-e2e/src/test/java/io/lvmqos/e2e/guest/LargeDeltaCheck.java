package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.GIB;
import static io.lvmqos.e2e.guest.Csi2.create;
import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.lvmqos.e2e.uml.GuestEnv;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A delta of 102 400 changed chunks of a 10 GiB thin volume, streamed: every chunk arrives, in pages
 * no larger than max_results, while the driver (a 32 MiB heap, as shipped) stays within a bounded
 * resident size. The time taken is printed for docs/changed-blocks.md, not asserted.
 */
public class LargeDeltaCheck {

    private static final int WRITE = 4096;
    @RegisterExtension
    static final DriverForTheClass driver = new DriverForTheClass();

    private static long residentKib(long pid) throws IOException {
        return Files.readAllLines(Path.of("/proc/" + pid + "/status")).stream().filter(l -> l.startsWith("VmRSS:"))
                .map(l -> Long.parseLong(l.replaceAll("[^0-9]", ""))).findFirst().orElseThrow();
    }

    @Test
    void aHundredThousandChangedChunksStreamInBoundedMemory() throws Exception {
        String vg = GuestEnv.volumeGroup();
        String pool = vg + "/" + GuestEnv.thinPool().orElseThrow();
        Map<String, String> thin = Map.of("lvmType", "thin", "overprovisionRatio", "2");
        Csi.Volume volume = driver.client().controller().createVolume(create("large", 10 * GIB, thin).build())
                .getVolume();
        String s1 = driver.client().controller().createSnapshot(Csi.CreateSnapshotRequest.newBuilder().setName("large-s1")
                .setSourceVolumeId(volume.getVolumeId()).build()).getSnapshot().getSnapshotId();
        long chunk = Long.parseLong(ok("lvm", "lvs", "--noheadings", "--units", "b", "--nosuffix", "-o", "chunk_size",
                pool).strip());
        // One 4 KiB write per chunk allocates the chunk; without zeroing, only those 4 KiB reach the disk.
        ok("lvm", "lvchange", "--zero", "n", pool);
        long written = 0;
        String[] parts = volume.getVolumeId().split("/");
        ByteBuffer data = ByteBuffer.allocate(WRITE);
        while (data.hasRemaining()) {
            data.put((byte) 0x5A);
        }
        try (FileChannel device = FileChannel.open(Path.of("/dev", parts[2], parts[3]), StandardOpenOption.WRITE)) {
            for (long c = 0; written < 102_400; c++) {
                if (c % 8 < 5) {
                    device.write(data.clear(), c * chunk);
                    written++;
                }
            }
            device.force(true);
        } finally {
            ok("lvm", "lvchange", "--zero", "y", pool);
        }
        String s2 = driver.client().controller().createSnapshot(Csi.CreateSnapshotRequest.newBuilder().setName("large-s2")
                .setSourceVolumeId(volume.getVolumeId()).build()).getSnapshot().getSnapshotId();

        long pid = driver.process().process().pid();
        long residentBefore = residentKib(pid);
        long started = System.nanoTime();
        Iterator<Csi.GetMetadataDeltaResponse> stream = driver.client().snapshotMetadata()
                .withDeadlineAfter(10, TimeUnit.MINUTES).getMetadataDelta(Csi.GetMetadataDeltaRequest.newBuilder()
                        .setBaseSnapshotId(s1).setTargetSnapshotId(s2).setMaxResults(256).build());
        long chunks = 0;
        long entries = 0;
        long messages = 0;
        long residentPeak = residentBefore;
        long lastEnd = 0;
        while (stream.hasNext()) {
            Csi.GetMetadataDeltaResponse page = stream.next();
            assertTrue(page.getBlockMetadataCount() <= 256, "max_results honoured");
            assertEquals(10 * GIB, page.getVolumeCapacityBytes());
            for (Csi.BlockMetadata range : page.getBlockMetadataList()) {
                assertTrue(range.getByteOffset() >= lastEnd, "ascending, not overlapping");
                lastEnd = range.getByteOffset() + range.getSizeBytes();
                chunks += range.getSizeBytes() / chunk;
                entries++;
            }
            if (++messages % 10 == 0) {
                residentPeak = Math.max(residentPeak, residentKib(pid));
                Thread.sleep(1); // a client slower than the driver: pages wait for it, not in the driver's heap
            }
        }
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        residentPeak = Math.max(residentPeak, residentKib(pid));
        System.out.printf("LargeDelta: %d changed chunks of %d bytes in %d ranges, %d messages, %d ms; driver"
                        + " resident %d KiB before, %d KiB at most during%n", chunks, chunk, entries, messages, millis,
                residentBefore, residentPeak);

        assertEquals(102_400, chunks, "every chunk written, and no other");
        assertEquals(102_400 / 5, entries, "runs of five adjacent chunks are one range each");
        assertTrue(residentPeak - residentBefore < 64 * 1024, "the driver's resident size grew by "
                + (residentPeak - residentBefore) + " KiB while it streamed");

        driver.client().controller().deleteSnapshot(Csi.DeleteSnapshotRequest.newBuilder().setSnapshotId(s2).build());
        driver.client().controller().deleteSnapshot(Csi.DeleteSnapshotRequest.newBuilder().setSnapshotId(s1).build());
        driver.client().controller().deleteVolume(Csi.DeleteVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).build());
    }
}
