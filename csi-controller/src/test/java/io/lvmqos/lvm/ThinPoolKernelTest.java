package io.lvmqos.lvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.lvmqos.errors.DriverException;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** What dmsetup and thin-provisioning-tools 0.9.0 printed in the guest for a pool with a volume and its snapshot. */
class ThinPoolKernelTest {

    @Test
    void theTransactionIdIsTheStatusFourthField() {
        assertEquals(2, ThinPoolKernel.transactionOfStatus(
                "0 2097152 thin-pool 2 114/1024 3/16384 - rw no_discard_passdown queue_if_no_space - 256"));
    }

    @Test
    void aStatusOfAnotherTargetIsRefused() {
        assertThrows(DriverException.Internal.class, () -> ThinPoolKernel.transactionOfStatus("0 65536 thin 0 -"));
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
        assertEquals(Set.of(1L, 2L), ThinPoolKernel.deviceIdsOfDump(dump));
        assertEquals(Set.of(), ThinPoolKernel.deviceIdsOfDump(
                "<superblock uuid=\"\" time=\"0\" transaction=\"0\" flags=\"0\" version=\"2\">\n</superblock>\n"));
    }

    @Test
    void theKernelTargetIsNamedAsDeviceMapperNamesIt() {
        assertEquals("lvmqos-thinpool-tpool", ThinPoolKernel.tpool("lvmqos", "thinpool"));
        assertEquals("my--vg-my--pool-tpool", ThinPoolKernel.tpool("my-vg", "my-pool"));
    }
}
