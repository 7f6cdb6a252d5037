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
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
    void refusesPathsOutsideTheRoot() {
        assertThrows(DriverException.InvalidArgument.class, () -> paths.check(outside.resolve("x")));
        assertThrows(DriverException.InvalidArgument.class, () -> paths.check(kubelet));
        assertThrows(DriverException.InvalidArgument.class, () -> paths.check(Path.of("pods/x")));
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
}
