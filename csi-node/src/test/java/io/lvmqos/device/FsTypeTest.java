package io.lvmqos.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.errors.DriverException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class FsTypeTest {

    @Test
    void emptyMeansExt4() {
        assertEquals(FsType.EXT4, FsType.fromCsi(""));
        assertEquals(FsType.EXT4, FsType.fromCsi(null));
    }

    @Test
    void knowsExt4AndXfs() {
        assertEquals(FsType.EXT4, FsType.fromCsi("ext4"));
        assertEquals(FsType.XFS, FsType.fromCsi("xfs"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"ext3", "btrfs", "EXT4", " xfs", "ext4,ro"})
    void refusesOthersNamingTheSupportedOnes(String fsType) {
        var e = assertThrows(DriverException.InvalidArgument.class, () -> FsType.fromCsi(fsType));
        assertTrue(e.getMessage().contains("ext4, xfs"), e.getMessage());
    }
}
