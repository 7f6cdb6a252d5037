package io.lvmqos.node;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.mount.MountEntry;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

class StagedElsewhereTest {

    private static final DeviceNumber VOLUME = new DeviceNumber(254, 3);
    private static final Path A = Path.of("/var/lib/kubelet/plugins/kubernetes.io/csi/lvmqos.csi.io/aaa/globalmount");
    private static final Path B = Path.of("/var/lib/kubelet/plugins/kubernetes.io/csi/lvmqos.csi.io/bbb/globalmount");
    private static final Path TARGET = Path.of("/var/lib/kubelet/pods/uid/volumes/kubernetes.io~csi/pv/mount");
    private static final Predicate<Path> STAGING = p -> p.toString().endsWith("/globalmount");

    private static MountEntry mount(int id, DeviceNumber device, Path at, String fsType) {
        return new MountEntry(id, 1, device, "/", at, List.of("rw"), List.of(), fsType, "/dev/dm-3", List.of("rw"));
    }

    @Test
    void aVolumeStagedAtAnotherStagingPathNamesIt() {
        List<MountEntry> mounts = List.of(mount(10, VOLUME, A, "ext4"), mount(11, VOLUME, TARGET, "ext4"));
        assertEquals(Optional.of(A), StagedElsewhere.find(mounts, VOLUME, B, STAGING));
    }

    @Test
    void stagingAgainAtTheSamePathIsNotElsewhere() {
        List<MountEntry> mounts = List.of(mount(10, VOLUME, A, "ext4"), mount(11, VOLUME, TARGET, "ext4"));
        assertEquals(Optional.empty(), StagedElsewhere.find(mounts, VOLUME, A, STAGING));
    }

    @Test
    void publishMountsAndOtherVolumesDoNotCount() {
        List<MountEntry> mounts = List.of(mount(11, VOLUME, TARGET, "ext4"),
                mount(12, new DeviceNumber(254, 4), A, "ext4"),
                mount(13, VOLUME, A, "devtmpfs"));
        assertEquals(Optional.empty(), StagedElsewhere.find(mounts, VOLUME, B, STAGING));
    }
}
