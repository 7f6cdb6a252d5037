package io.lvmqos.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.cgroup.PodUids;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PodUidTest {

    static final Path KUBELET = Path.of("/var/lib/kubelet");

    /** A UUID (API pods) and 32 hex digits (static and mirror pods): both are pods to publish and to lift. */
    @ParameterizedTest
    @ValueSource(strings = {"7c1d6e0a-2b2f-4d8a-9c55-1f0e2b9a7d31", "4b1f1f1e0d8a4c7e9f0a1b2c3d4e5f60"})
    void theTargetPathAndTheCgroupLookupAgreeOnWhatAPodUidIs(String uid) {
        Path target = KUBELET.resolve("pods").resolve(uid).resolve("volumes/kubernetes.io~csi/pv/mount");
        assertEquals(Optional.of(uid), PodUid.fromTargetPath(target, KUBELET), "unpublish finds the pod");
        assertEquals(Optional.of(uid), PodUid.of(Map.of(), target, KUBELET), "publish finds the pod");
        assertTrue(PodUids.isValid(uid), "the cgroup lookup accepts it");
        Path block = KUBELET.resolve("plugins/kubernetes.io/csi/volumeDevices/publish/pv").resolve(uid);
        assertEquals(Optional.of(uid), PodUid.fromTargetPath(block, KUBELET));
    }

    @ParameterizedTest
    @ValueSource(strings = {"7C1D6E0A-2B2F-4D8A-9C55-1F0E2B9A7D31", "..", "x", "pod uid"})
    void whatTheCgroupLookupWouldRefuseIsNoPodUid(String uid) {
        Path target = KUBELET.resolve("pods").resolve(uid).resolve("volumes/kubernetes.io~csi/pv/mount");
        assertEquals(Optional.empty(), PodUid.fromTargetPath(target.normalize(), KUBELET));
    }
}
