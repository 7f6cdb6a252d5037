package io.lvmqos.lvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.CommandRunner;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The parsers, on what dmsetup and thin-provisioning-tools 0.9.0 printed in the guest for a pool with a
 * volume and its snapshot; and the metadata snapshot's turns, on stand-ins for the two programs.
 */
class ThinPoolsTest {

    @Test
    void theTransactionIdIsTheStatusFourthField() {
        assertEquals(2, ThinPools.transactionOfStatus(
                "0 2097152 thin-pool 2 114/1024 3/16384 - rw no_discard_passdown queue_if_no_space - 256"));
    }

    @Test
    void aStatusOfAnotherTargetIsRefused() {
        assertThrows(DriverException.Internal.class, () -> ThinPools.transactionOfStatus("0 65536 thin 0 -"));
    }

    @Test
    void theDeviceIdsAreReadFromThinDumpWithoutMappings() {
        String dump = """
                <superblock uuid="" time="1" transaction="2" flags="0" version="2" data_block_size="128" nr_data_blocks="0">
                  <device dev_id="1" mapped_blocks="3" transaction="0" creation_time="0" snap_time="1">
                  </device>
                  <device dev_id="2" mapped_blocks="0" transaction="1" creation_time="1" snap_time="1">
                  </device>
                </superblock>
                """;
        assertEquals(Set.of(1L, 2L), ThinPools.deviceIdsOfDump(dump));
        assertEquals(Set.of(), ThinPools.deviceIdsOfDump(
                "<superblock uuid=\"\" time=\"0\" transaction=\"0\" flags=\"0\" version=\"2\">\n</superblock>\n"));
    }

    /** As thin_dump 0.9.0 printed it for an inactive pool's metadata LV in the guest, a kill after create_snap. */
    @Test
    void anInactivePoolsMetadataIsItsSuperblocksTransactionAndItsDevices() {
        String dump = """
                <superblock uuid="" time="1" transaction="1" flags="0" version="2" data_block_size="128" nr_data_blocks="3200">
                  <device dev_id="1" mapped_blocks="64" transaction="0" creation_time="0" snap_time="1">
                  </device>
                  <device dev_id="2" mapped_blocks="64" transaction="1" creation_time="1" snap_time="1">
                  </device>
                </superblock>
                """;
        assertEquals(new ThinPools.KernelMetadata(1, Set.of(1L, 2L)), ThinPools.metadataOfDump(dump));
        assertThrows(DriverException.Internal.class, () -> ThinPools.metadataOfDump("thin_dump: bad checksum\n"));
    }

    /**
     * The overlap e453886 retried around: the start-up release of a stale metadata snapshot landing
     * between a device-id dump's reserve and its read. The release is tried while the dump runs, and
     * must leave the dump's snapshot alone; before ThinPools it took it, and thin_dump found none.
     */
    @Test
    void aStaleSnapshotReleaseDuringADeviceIdDumpLeavesTheDumpItsSnapshot(@TempDir Path dir) throws Exception {
        FakePoolKernel kernel = new FakePoolKernel(dir);
        ThinPools pools = new ThinPools(new CommandRunner(), kernel::program);
        HalfSentPoolChange.Recorded recorded = new HalfSentPoolChange.Recorded("pool", true, 4, Map.of("v1", 1L, "s1", 2L));
        CompletableFuture<Set<String>> check = CompletableFuture.supplyAsync(
                () -> pools.queued("vg", List.of(recorded), List.of("v1", "s1")), Thread::startVirtualThread);
        while (!kernel.dumping()) {
            Thread.onSpinWait();
        }
        assertFalse(pools.releaseStale("vg", "pool"), "the dump's snapshot is no stale one");
        kernel.letTheDumpGoOn();
        assertEquals(Set.of("s1"), check.get(), "the kernel holds device 1 only: s1's create is queued");
        assertEquals(List.of("dump-start", "dump-end", "release"), kernel.log());
    }

    @Test
    void aSnapshotLeftHeldIsReleasedAtStartAndBeforeTheNextRead(@TempDir Path dir) throws Exception {
        FakePoolKernel kernel = new FakePoolKernel(dir);
        ThinPools pools = new ThinPools(new CommandRunner(), kernel::program);
        kernel.holdSnapshot();
        assertTrue(pools.releaseStale("vg", "pool"));
        assertFalse(pools.releaseStale("vg", "pool"), "nothing left to release");
        kernel.holdSnapshot();
        kernel.letTheDumpGoOn();
        assertEquals(Set.of(), pools.queued("vg", List.of(new HalfSentPoolChange.Recorded("pool", true, 4,
                Map.of("v1", 1L))), List.of("v1")));
        assertEquals(List.of("release", "release", "release", "dump-start", "dump-end", "release"), kernel.log());
    }

    @Test
    void aPoolWhoseTargetIsNotLoadedHasNoQueueToLookAt(@TempDir Path dir) {
        FakePoolKernel kernel = new FakePoolKernel(dir);
        kernel.unload();
        ThinPools pools = new ThinPools(new CommandRunner(), kernel::program);
        assertEquals(Set.of(), pools.queued("vg", List.of(new HalfSentPoolChange.Recorded("pool", true, 4,
                Map.of("v1", 1L))), List.of("v1")), "no INTERNAL from dmsetup status, and nothing queued");
        assertEquals(List.of(), kernel.log(), "no metadata snapshot taken");
    }
}
