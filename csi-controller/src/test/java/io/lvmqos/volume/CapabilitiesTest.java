package io.lvmqos.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import csi.v1.Csi.VolumeCapability.AccessMode.Mode;
import io.lvmqos.errors.DriverException;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

class CapabilitiesTest {

    static Csi.VolumeCapability.AccessMode mode(Mode mode) {
        return Csi.VolumeCapability.AccessMode.newBuilder().setMode(mode).build();
    }

    static Csi.VolumeCapability block(Mode mode) {
        return Csi.VolumeCapability.newBuilder().setAccessMode(mode(mode))
                .setBlock(Csi.VolumeCapability.BlockVolume.getDefaultInstance()).build();
    }

    static Csi.VolumeCapability mount(String fsType) {
        return Csi.VolumeCapability.newBuilder().setAccessMode(mode(Mode.SINGLE_NODE_WRITER))
                .setMount(Csi.VolumeCapability.MountVolume.newBuilder().setFsType(fsType)).build();
    }

    @ParameterizedTest
    @EnumSource(value = Mode.class, names = {"SINGLE_NODE_WRITER", "SINGLE_NODE_READER_ONLY",
            "SINGLE_NODE_SINGLE_WRITER", "SINGLE_NODE_MULTI_WRITER"})
    void singleNodeModesAreSupported(Mode mode) {
        assertEquals(Optional.empty(), Capabilities.unsupportedReason(block(mode)));
    }

    @ParameterizedTest
    @EnumSource(value = Mode.class, names = {"MULTI_NODE_READER_ONLY", "MULTI_NODE_SINGLE_WRITER",
            "MULTI_NODE_MULTI_WRITER", "UNKNOWN"})
    void otherModesAreRefusedNamingTheMode(Mode mode) {
        String reason = Capabilities.unsupportedReason(block(mode)).orElseThrow();
        assertTrue(reason.contains(mode.name()), reason);
    }

    @Test
    void aCapabilityWithoutAccessModeIsRefused() {
        Csi.VolumeCapability capability = Csi.VolumeCapability.newBuilder()
                .setBlock(Csi.VolumeCapability.BlockVolume.getDefaultInstance()).build();
        assertTrue(Capabilities.unsupportedReason(capability).orElseThrow().contains("access mode"));
    }

    @Test
    void aCapabilityWithoutAccessTypeIsRefused() {
        Csi.VolumeCapability capability = Csi.VolumeCapability.newBuilder()
                .setAccessMode(mode(Mode.SINGLE_NODE_WRITER)).build();
        assertTrue(Capabilities.unsupportedReason(capability).orElseThrow().contains("access type"));
    }

    @ParameterizedTest(name = "fs_type \"{0}\"")
    @ValueSource(strings = {"", "ext4", "xfs"})
    void supportedFilesystemsAreAccepted(String fsType) {
        assertEquals(Optional.empty(), Capabilities.unsupportedReason(mount(fsType)));
    }

    @ParameterizedTest(name = "fs_type \"{0}\"")
    @ValueSource(strings = {"btrfs", "ext3", "EXT4", "nfs", " xfs"})
    void otherFilesystemsAreRefusedNamingTheType(String fsType) {
        String reason = Capabilities.unsupportedReason(mount(fsType)).orElseThrow();
        assertTrue(reason.contains("\"" + fsType + "\""), reason);
    }

    @Test
    void anEmptyCapabilityListIsInvalid() {
        assertThrows(DriverException.InvalidArgument.class, () -> Capabilities.requireSupported(List.of()));
    }

    @Test
    void oneUnsupportedCapabilityAmongSupportedOnesIsInvalid() {
        assertThrows(DriverException.InvalidArgument.class, () -> Capabilities.requireSupported(
                List.of(mount("ext4"), block(Mode.MULTI_NODE_MULTI_WRITER))));
    }

    @Test
    void supportedCapabilitiesPass() {
        Capabilities.requireSupported(List.of(mount("xfs"), block(Mode.SINGLE_NODE_READER_ONLY)));
    }
}
