package io.lvmqos.cgroup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.errors.DriverException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class PodCgroupsTest {

    static final String UID = "7c1d6e0a-2b2f-4d8a-9c55-1f0e2b9a7d31";
    static final String UID_ = "7c1d6e0a_2b2f_4d8a_9c55_1f0e2b9a7d31";

    @TempDir
    Path root;

    private void v2() throws IOException {
        Files.writeString(root.resolve("cgroup.controllers"), "cpuset cpu io memory pids\n");
    }

    private void v1() throws IOException {
        Files.createDirectories(root.resolve("blkio"));
        Files.writeString(root.resolve("blkio/blkio.throttle.write_bps_device"), "");
    }

    @ParameterizedTest(name = "v2 {0}")
    @CsvSource({
            "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + UID_ + ".slice",
            "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + UID_ + ".slice",
            "kubepods.slice/kubepods-pod" + UID_ + ".slice",
            "kubepods/burstable/pod" + UID,
            "kubepods/besteffort/pod" + UID,
            "kubepods/pod" + UID,
    })
    void findsThePodOnCgroupV2ForEitherDriverAndAnyQosClass(String layout) throws IOException {
        v2();
        Path pod = Files.createDirectories(root.resolve(layout));
        PodCgroups cgroups = new PodCgroups(root);
        assertEquals(CgroupMode.V2, cgroups.mode());
        assertEquals(Optional.of(pod), cgroups.find(UID).cgroup());
        assertEquals(pod, cgroups.require(UID));
    }

    @ParameterizedTest(name = "v1 {0}")
    @ValueSource(strings = {
            "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + UID_ + ".slice",
            "kubepods/besteffort/pod" + UID,
            "kubepods/pod" + UID,
    })
    void findsThePodInTheBlkioHierarchyOnCgroupV1(String layout) throws IOException {
        v1();
        Path pod = Files.createDirectories(root.resolve("blkio").resolve(layout));
        Files.createDirectories(root.resolve("memory").resolve(layout));
        PodCgroups cgroups = new PodCgroups(root);
        assertEquals(CgroupMode.V1, cgroups.mode());
        assertEquals(Optional.of(pod), cgroups.find(UID).cgroup());
    }

    @Test
    void aMissingPodIsUnavailableNamingEveryPlaceTried() throws IOException {
        v2();
        Files.createDirectories(root.resolve("kubepods.slice/kubepods-pod" + UID_ + "x.slice"));
        Files.createDirectories(root.resolve("kubepods/burstable"));
        PodCgroups cgroups = new PodCgroups(root);
        assertEquals(6, cgroups.find(UID).tried().size());
        var e = assertThrows(DriverException.Unavailable.class, () -> cgroups.require(UID));
        assertTrue(e.getMessage().contains("kubepods/burstable/pod" + UID), e.getMessage());
        assertTrue(e.getMessage().contains("kubepods-besteffort-pod" + UID_ + ".slice"), e.getMessage());
        assertFalse(e.getMessage().contains("sandbox"), e.getMessage());
    }

    @Test
    void aPodCgroupMadeAfterAMissIsFoundOnTheRetry() throws IOException {
        v2();
        Files.createDirectories(root.resolve("kubepods/besteffort"));
        PodCgroups cgroups = new PodCgroups(root);
        assertThrows(DriverException.Unavailable.class, () -> cgroups.require(UID));
        Path pod = Files.createDirectories(root.resolve("kubepods/besteffort/pod" + UID));
        assertEquals(pod, cgroups.require(UID));
    }

    @Test
    void aPodTreeMadeAfterTheFirstLookupIsFound() throws IOException {
        v2();
        Path first = Files.createDirectories(root.resolve("kubepods/pod" + UID));
        PodCgroups cgroups = new PodCgroups(root);
        assertEquals(first, cgroups.require(UID));
        String other = "0a1b2c3d-0000-4000-8000-000000000002";
        Path second = Files.createDirectories(root.resolve("kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-pod"
                + other.replace('-', '_') + ".slice"));
        assertEquals(second, cgroups.require(other), "the cached tree misses, so the hierarchy is searched again");
    }

    /**
     * kind runs kubelet with --cgroup-root=/kubelet: the cgroupfs driver nests kubepods below it,
     * systemd turns the path into kubelet.slice/kubelet-kubepods.slice and prefixes every slice.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "kubelet/kubepods/burstable/pod" + UID,
            "kubelet/kubepods/besteffort/pod" + UID,
            "kubelet/kubepods/pod" + UID,
            "kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-burstable.slice/kubelet-kubepods-burstable-pod" + UID_ + ".slice",
            "kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod" + UID_ + ".slice",
            "kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-pod" + UID_ + ".slice",
            "a/b/kubelet/kubepods/pod" + UID,
    })
    void findsThePodBelowAnyKubeletCgroupRoot(String layout) throws IOException {
        v2();
        Files.createDirectories(root.resolve("system.slice/containerd.service"));
        Path pod = Files.createDirectories(root.resolve(layout));
        assertEquals(pod, new PodCgroups(root).require(UID));
    }

    @Test
    void neverAnotherPodsCgroup() throws IOException {
        v2();
        String prefixOfOther = UID.substring(0, 30);
        Files.createDirectories(root.resolve("kubepods/burstable/pod" + UID + "0"));
        Files.createDirectories(root.resolve("kubepods/burstable/pod" + prefixOfOther));
        Files.createDirectories(root.resolve("kubepods.slice/kubepods-pod" + UID + ".slice")); // dashes: not systemd's
        assertThrows(DriverException.Unavailable.class, () -> new PodCgroups(root).require(UID));
    }

    /**
     * --cgroups-per-qos=false: kubelet's pod container manager is a no-op that names the cgroup
     * root for every pod, so the containers of all pods sit side by side below it.
     */
    @Test
    void withoutCgroupsPerQosThereIsNoPodCgroupAndPublishIsRefusedSayingWhy() throws IOException {
        v2();
        Files.createDirectories(root.resolve("kubelet/4f5e6d7c8b9a0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899"));
        Files.createDirectories(root.resolve("system.slice/kubelet.service"));
        var e = assertThrows(DriverException.FailedPrecondition.class, () -> new PodCgroups(root).require(UID));
        assertTrue(e.getMessage().contains("--cgroups-per-qos=false"), e.getMessage());
        assertTrue(e.getMessage().contains(root.toString()), e.getMessage());
    }

    @Test
    void staticPodUidsWithoutDashesAreAccepted() throws IOException {
        v2();
        String uid = "4b1f1f1e0d8a4c7e9f0a1b2c3d4e5f60";
        Path pod = Files.createDirectories(root.resolve("kubepods/pod" + uid));
        assertEquals(Optional.of(pod), new PodCgroups(root).find(uid).cgroup());
    }

    @Test
    void aNestedKubepodsParentIsSearched() throws IOException {
        v2();
        Path pod = Files.createDirectories(root.resolve("k8s.slice/kubepods/pod" + UID));
        assertEquals(Optional.of(pod), new PodCgroups(root).find(UID).cgroup());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "../../etc", "7C1D6E0A-2B2F-4D8A-9C55-1F0E2B9A7D31", "uid/../x", "a b", "-abc", "x"})
    void refusesPodUidsThatAreNotHexAndDashes(String uid) throws IOException {
        v2();
        assertThrows(DriverException.InvalidArgument.class, () -> new PodCgroups(root).find(uid));
    }

    @Test
    void withoutAnIoControllerTheModeIsUnavailable() {
        assertThrows(DriverException.Unavailable.class, () -> new PodCgroups(root).mode());
    }
}
