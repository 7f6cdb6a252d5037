package io.lvmqos.device;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import org.junit.jupiter.api.Test;

class BlockDeviceProbeTest {

    @Test
    void parsesBlkidExportOutput() {
        Map<String, String> tags = BlockDeviceProbe.parseExport("""
                DEVNAME=/dev/loop0
                UUID=2386a2cd-ba04-43cf-9887-f683c9c4abd6
                LABEL=my\\ data
                BLOCK_SIZE=1024
                TYPE=ext4
                USAGE=filesystem
                """);
        assertEquals("ext4", tags.get("TYPE"));
        assertEquals("my data", tags.get("LABEL"));
    }

    @Test
    void aFilesystemIsAFilesystem() {
        assertEquals(new DeviceContents.Filesystem("xfs"),
                BlockDeviceProbe.classify(Map.of("TYPE", "xfs", "USAGE", "filesystem")));
    }

    @Test
    void aPartitionTableIsNotBlank() {
        assertEquals(new DeviceContents.PartitionTable("gpt"),
                BlockDeviceProbe.classify(Map.of("DEVNAME", "/dev/sdb", "PTTYPE", "gpt", "PTUUID", "x")));
    }

    @Test
    void anLvmPhysicalVolumeIsSomethingElse() {
        var contents = BlockDeviceProbe.classify(Map.of("TYPE", "LVM2_member", "USAGE", "raid"));
        assertEquals("LVM2_member (raid)", contents.describe());
    }

    @Test
    void tagsWithoutATypeAreStillNotBlank() {
        var contents = BlockDeviceProbe.classify(Map.of("DEVNAME", "/dev/loop0"));
        assertEquals(DeviceContents.Other.class, contents.getClass());
    }
}
