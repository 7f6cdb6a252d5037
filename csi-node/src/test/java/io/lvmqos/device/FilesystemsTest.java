package io.lvmqos.device;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The mkfs command lines (the formats themselves run on loop devices in FilesystemsRootTest). */
class FilesystemsTest {

    private static final Path DEVICE = Path.of("/dev/lvmqos/vol");

    @Test
    void ext4OnAZeroedDeviceSkipsTheZeroingAndOnAnyOtherLeavesItToTheKernel() {
        assertEquals(List.of("-q", "-m", "0", "-E", "assume_storage_prezeroed=1", "--", "/dev/lvmqos/vol"),
                Filesystems.arguments(DEVICE, FsType.EXT4, Filesystems.Contents.ZEROED));
        assertEquals(List.of("-q", "-m", "0", "--", "/dev/lvmqos/vol"),
                Filesystems.arguments(DEVICE, FsType.EXT4, Filesystems.Contents.UNKNOWN));
    }

    @Test
    void xfsKeepsItsDefaultsEitherWay() {
        assertEquals(List.of("-q", "--", "/dev/lvmqos/vol"),
                Filesystems.arguments(DEVICE, FsType.XFS, Filesystems.Contents.ZEROED));
        assertEquals(List.of("-q", "--", "/dev/lvmqos/vol"),
                Filesystems.arguments(DEVICE, FsType.XFS, Filesystems.Contents.UNKNOWN));
    }
}
