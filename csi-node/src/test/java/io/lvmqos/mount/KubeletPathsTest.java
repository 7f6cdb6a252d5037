package io.lvmqos.mount;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.errors.DriverException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class KubeletPathsTest {

    @TempDir
    Path dir;
    Path kubelet;
    Path outside;
    KubeletPaths paths;

    @BeforeEach
    void layOut() throws IOException {
        kubelet = Files.createDirectories(dir.resolve("var/lib/kubelet"));
        outside = Files.createDirectories(dir.resolve("etc"));
        paths = new KubeletPaths(kubelet);
    }

    @Test
    void createsMissingDirectoriesUnderTheRoot() {
        Path target = kubelet.resolve("pods/uid/volumes/kubernetes.io~csi/pvc-1/mount");
        assertEquals(target, paths.createDirectory(target));
        assertTrue(Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS));
        assertEquals(target, paths.createDirectory(target));
    }

    @Test
    void aPodsTargetsAreItsVolumeDirectoriesLeavesAndItsRawBlockPublishes() throws IOException {
        Path root = kubelet.toRealPath();
        Path volumes = root.resolve("pods/uid-1/volumes/kubernetes.io~csi");
        Path mount = Files.createDirectories(volumes.resolve("pv-a/mount"));
        Path data = Files.writeString(volumes.resolve("pv-a/vol_data.json"), "{}");
        Files.writeString(volumes.resolve("stray-file"), "");
        Files.createDirectories(root.resolve("pods/uid-2/volumes/kubernetes.io~csi/pv-b/mount"));
        Path publish = Files.createDirectories(root.resolve("plugins/kubernetes.io/csi/volumeDevices/publish"));
        Path block = Files.createFile(Files.createDirectories(publish.resolve("pv-c")).resolve("uid-1"));
        Files.createFile(Files.createDirectories(publish.resolve("pv-d")).resolve("uid-2"));

        assertEquals(java.util.Set.of(mount, data, block), java.util.Set.copyOf(paths.podTargets("uid-1")));
        assertEquals(java.util.List.of(), paths.podTargets("uid-3"), "a pod with no directory has no targets");
        assertThrows(DriverException.InvalidArgument.class, () -> paths.podTargets("../uid-1"));
    }

    @Test
    void aPodsTargetsAreNotListedThroughASymlink() throws IOException {
        Path root = kubelet.toRealPath();
        Files.createDirectories(outside.resolve("volumes/kubernetes.io~csi/pv-a/mount"));
        Files.createDirectories(root.resolve("pods"));
        Files.createSymbolicLink(root.resolve("pods/uid-1"), outside);
        assertThrows(DriverException.InvalidArgument.class, () -> paths.podTargets("uid-1"));
    }

    @Test
    void refusesPathsOutsideTheRoot() {
        assertThrows(DriverException.InvalidArgument.class, () -> paths.check(outside.resolve("x")));
        assertThrows(DriverException.InvalidArgument.class, () -> paths.check(kubelet));
        assertThrows(DriverException.InvalidArgument.class, () -> paths.check(Path.of("pods/x")));
    }

    @Test
    void refusesANameOrAPathTooLongForTheFileSystemAsTheCallersMistake() {
        // KubeletPathsFuzzTest's finding: the kernel's ENAMETOOLONG came back as an INTERNAL error
        assertThrows(DriverException.InvalidArgument.class, () -> paths.check(kubelet.resolve("pods/" + "x".repeat(256))));
        assertThrows(DriverException.InvalidArgument.class,
                () -> paths.check(kubelet.resolve(("pods/" + "x".repeat(200) + "/").repeat(21) + "mount")));
        assertEquals(kubelet.resolve("pods/" + "x".repeat(255)).toAbsolutePath(),
                paths.check(kubelet.resolve("pods/" + "x".repeat(255))).toAbsolutePath());
    }

    @Test
    void refusesAPathThatGoesOnBelowAFile() throws IOException {
        Files.createDirectories(kubelet.resolve("pods"));
        Files.writeString(kubelet.resolve("pods/file"), "");
        var e = assertThrows(DriverException.InvalidArgument.class, () -> paths.check(kubelet.resolve("pods/file/mount")));
        assertTrue(e.getMessage().contains("not a directory"), e.getMessage());
    }

    @Test
    void refusesDotDotEvenWhenItStaysInside() {
        assertThrows(DriverException.InvalidArgument.class,
                () -> paths.check(Path.of(kubelet + "/pods/../pods/x")));
        assertThrows(DriverException.InvalidArgument.class,
                () -> paths.check(Path.of(kubelet + "/pods/../../../etc")));
    }

    @Test
    void refusesASymlinkedDirectoryOnThePath() throws IOException {
        Files.createDirectories(kubelet.resolve("pods"));
        Files.createSymbolicLink(kubelet.resolve("pods/evil"), outside);
        var e = assertThrows(DriverException.InvalidArgument.class,
                () -> paths.createDirectory(kubelet.resolve("pods/evil/volumes/mount")));
        assertTrue(e.getMessage().contains("symlink"), e.getMessage());
        assertFalse(Files.exists(outside.resolve("volumes")));
    }

    @Test
    void refusesToRemoveThroughAFinalSymlink() throws IOException {
        Path victim = Files.createFile(outside.resolve("passwd"));
        Files.createDirectories(kubelet.resolve("pods"));
        Files.createSymbolicLink(kubelet.resolve("pods/target"), victim);
        assertThrows(DriverException.InvalidArgument.class, () -> paths.remove(kubelet.resolve("pods/target")));
        assertTrue(Files.exists(victim));
    }

    @Test
    void removesAnEmptyDirectoryAndSaysWhenNothingWasThere() {
        Path target = paths.createDirectory(kubelet.resolve("pods/uid/mount"));
        assertTrue(paths.remove(target));
        assertFalse(paths.remove(target));
    }

    @Test
    void aNonEmptyDirectoryIsNotRemoved() throws IOException {
        Path target = paths.createDirectory(kubelet.resolve("pods/uid/mount"));
        Files.createFile(target.resolve("data"));
        assertThrows(DriverException.FailedPrecondition.class, () -> paths.remove(target));
    }

    @Test
    void createsTheFileABlockVolumeIsPublishedOn() {
        paths.createDirectory(kubelet.resolve("plugins/dev"));
        Path file = paths.createFile(kubelet.resolve("plugins/dev/pvc-1"));
        assertTrue(Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS));
        assertEquals(file, paths.createFile(file));
        assertThrows(DriverException.FailedPrecondition.class,
                () -> paths.createFile(kubelet.resolve("plugins/dev")));
    }

    @Test
    void aSymlinkedKubeletDirectoryIsAcceptedUnderBothSpellings() throws IOException {
        Path link = Files.createSymbolicLink(dir.resolve("kubelet-link"), kubelet);
        KubeletPaths viaLink = new KubeletPaths(link);
        Path real = kubelet.toRealPath().resolve("pods/uid");
        assertEquals(real, viaLink.check(link.resolve("pods/uid")));
        assertEquals(real, viaLink.check(real));
    }

    @ParameterizedTest(name = "staging {0}")
    @ValueSource(strings = {
            "plugins/kubernetes.io/csi/lvmqos.csi.io/0f3c2a9e/globalmount",
            "plugins/kubernetes.io/csi/pv/pvc-1/globalmount",
            "plugins/kubernetes.io/csi/volumeDevices/staging/pvc-1"})
    void kubeletsStagingPathsAreTaken(String relative) {
        KubeletPaths driverPaths = new KubeletPaths(kubelet, "lvmqos.csi.io");
        assertEquals(kubelet.resolve(relative), driverPaths.checkStaging(kubelet.resolve(relative)));
        assertEquals(Optional.of(kubelet.resolve(relative)), driverPaths.volumePath(kubelet.resolve(relative)));
    }

    @ParameterizedTest(name = "target {0}")
    @ValueSource(strings = {
            "pods/3f1e/volumes/kubernetes.io~csi/pvc-1/mount",
            "pods/3f1e/volumes/kubernetes.io~csi/pvc-1/target",
            "plugins/kubernetes.io/csi/volumeDevices/publish/pvc-1/3f1e"})
    void kubeletsTargetPathsAreTaken(String relative) {
        KubeletPaths driverPaths = new KubeletPaths(kubelet, "lvmqos.csi.io");
        assertEquals(kubelet.resolve(relative), driverPaths.checkTarget(kubelet.resolve(relative)));
        assertEquals(Optional.of(kubelet.resolve(relative)), driverPaths.volumePath(kubelet.resolve(relative)));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {
            "pki",
            "pki/kubelet.crt",
            "plugins_registry/lvmqos.csi.io-reg.sock",
            "plugins/lvmqos.csi.io",
            "plugins/kubernetes.io/csi/other.csi.io/0f3c2a9e/globalmount",
            "plugins/kubernetes.io/csi/lvmqos.csi.io/0f3c2a9e",
            "plugins/kubernetes.io/csi/lvmqos.csi.io/0f3c2a9e/globalmount/x",
            "plugins/kubernetes.io/csi/volumeDevices/publish/pvc-1",
            "pods/3f1e",
            "pods/3f1e/etc-hosts",
            "pods/3f1e/volumes/kubernetes.io~secret/token/mount",
            "pods/3f1e/volumes/kubernetes.io~csi/pvc-1",
            "pods/3f1e/volumes/kubernetes.io~csi/pvc-1/mount/x",
            "pods/3f1e/containers/app/0"})
    void kubeletsOwnFilesAreNeitherStagingNorTargets(String relative) {
        KubeletPaths driverPaths = new KubeletPaths(kubelet, "lvmqos.csi.io");
        Path path = kubelet.resolve(relative);
        var staging = assertThrows(DriverException.InvalidArgument.class, () -> driverPaths.checkStaging(path));
        assertTrue(staging.getMessage().contains("globalmount"), "says what is taken: " + staging.getMessage());
        var target = assertThrows(DriverException.InvalidArgument.class, () -> driverPaths.checkTarget(path));
        assertTrue(target.getMessage().contains("kubernetes.io~csi"), "says what is taken: " + target.getMessage());
        assertEquals(Optional.empty(), driverPaths.volumePath(path));
    }

    @Test
    void aVolumePathOutsideTheKubeletDirectoryIsNoVolumeRatherThanAnError() {
        KubeletPaths driverPaths = new KubeletPaths(kubelet, "lvmqos.csi.io");
        assertEquals(Optional.empty(), driverPaths.volumePath(Path.of("some/path")));
        assertEquals(Optional.empty(), driverPaths.volumePath(outside));
    }
}
