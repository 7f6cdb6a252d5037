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
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Walking kubelet paths by descriptors, with openat2 and with the openat fallback of kernels before 5.6. */
class BeneathTest {

    @TempDir
    Path dir;
    Path kubelet;
    Path outside;

    @BeforeEach
    void layOut() throws IOException {
        kubelet = Files.createDirectories(dir.toRealPath().resolve("kubelet"));
        outside = Files.createDirectories(dir.toRealPath().resolve("outside"));
    }

    /** openat2 as the kernel has it, or a kernel without it (ENOSYS), which makes the walk use openat. */
    private Beneath beneath(boolean openat2) {
        AtomicInteger injected = new AtomicInteger();
        LibC libc = new ForwardingLibC(NativeLibC.libc()) {
            @Override
            public long syscall(long number, int dirFd, String path, long[] how, long size) {
                if (!openat2 && number == Beneath.SYS_OPENAT2) {
                    injected.set(Errno.ENOSYS.intValue());
                    return -1;
                }
                injected.set(0);
                return real.syscall(number, dirFd, path, how, size);
            }

            @Override
            public int openat(int dirFd, String path, int flags, int mode) {
                injected.set(0);
                return real.openat(dirFd, path, flags, mode);
            }

            @Override
            public int mkdirat(int dirFd, String path, int mode) {
                injected.set(0);
                return real.mkdirat(dirFd, path, mode);
            }

            @Override
            public int unlinkat(int dirFd, String path, int flags) {
                injected.set(0);
                return real.unlinkat(dirFd, path, flags);
            }
        };
        return new Beneath(libc, () -> injected.get() != 0 ? injected.get() : NativeLibC.lastError().getAsInt(),
                kubelet);
    }

    @Test
    void readsTheMountIdOfADescriptor() {
        assertEquals(31, Beneath.parseMountId("pos:\t0\nflags:\t012400000\nmnt_id:\t31\nino:\t2254459\n"));
        assertThrows(DriverException.Internal.class, () -> Beneath.parseMountId("pos:\t0\n"));
    }

    @Test
    void pathsAreSplitIntoPlainNames() {
        assertEquals(List.of("pods", "uid", "mount"), Beneath.components(Path.of("pods/uid/mount")));
        assertThrows(DriverException.InvalidArgument.class, () -> beneath(true).names(kubelet));
        assertThrows(DriverException.InvalidArgument.class, () -> beneath(true).names(outside.resolve("x")));
        assertThrows(DriverException.InvalidArgument.class,
                () -> beneath(true).names(Path.of(kubelet + "/pods/../../outside")));
    }

    @ParameterizedTest(name = "openat2 {0}")
    @ValueSource(booleans = {true, false})
    void createsAndRemovesDirectoriesOneLevelAtATime(boolean openat2) {
        Beneath beneath = beneath(openat2);
        Path target = kubelet.resolve("pods/uid/volumes/kubernetes.io~csi/pv/mount");
        beneath.createDirectories(target);
        beneath.createDirectories(target);
        assertTrue(Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS));
        assertTrue(beneath.remove(target));
        assertFalse(beneath.remove(target));
        assertFalse(beneath.remove(kubelet.resolve("pods/missing/mount")));
    }

    /** The directories above the last name are reached by one openat2 when they are all there, by the walk when not. */
    @Test
    void existingDirectoriesAreOpenedByOneOpenat2() throws IOException {
        AtomicInteger openat2Calls = new AtomicInteger();
        LibC counting = new ForwardingLibC(NativeLibC.libc()) {
            @Override
            public long syscall(long number, int dirFd, String path, long[] how, long size) {
                if (number == Beneath.SYS_OPENAT2) {
                    openat2Calls.incrementAndGet();
                }
                return real.syscall(number, dirFd, path, how, size);
            }
        };
        Beneath beneath = new Beneath(counting, NativeLibC.lastError(), kubelet);
        Path target = kubelet.resolve("pods/uid/volumes/kubernetes.io~csi/pv/mount");

        beneath.createDirectoryIn(target).close();
        assertEquals(1 + Beneath.SHORTER_TRIES + 5 * 2, openat2Calls.getAndSet(0), "nothing there: the whole, then"
                + " shorter tries, then the walk opens each of the five names twice, before and after it makes it");
        Files.delete(target);
        Files.delete(target.getParent());
        beneath.createDirectoryIn(target).close();
        assertEquals(2 + 2, openat2Calls.getAndSet(0), "the <pv> directory missing: the whole, then one name shorter,"
                + " then that one name opened before and after it is made");
        assertTrue(Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS));
        Files.delete(target);
        Files.delete(target.getParent());
        var missing = assertThrows(DriverException.NotFound.class, () -> beneath.parent(target));
        assertTrue(missing.getMessage().startsWith(target.getParent() + " does not exist"), missing.getMessage());
        assertEquals(3, openat2Calls.getAndSet(0), "the whole, one name shorter, then the missing name");
        beneath.createDirectoryIn(target).close();
        openat2Calls.set(0);
        try (Beneath.Parent parent = beneath.parent(target)) {
            assertEquals(1, openat2Calls.getAndSet(0));
            assertEquals(Optional.of(target.getParent()), parent.dir().currentPath());
            assertEquals("mount", parent.name());
        }
        try (Beneath.Fd opened = beneath.openDirectory(target)) {
            assertEquals(2, openat2Calls.getAndSet(0), "the parent at once, then the last name");
            assertEquals(Optional.of(target), opened.currentPath());
        }
        beneath.createDirectories(target);
        assertEquals(1, openat2Calls.getAndSet(0));

        Files.delete(target);
        Files.delete(target.getParent());
        Files.createSymbolicLink(target.getParent(), outside);
        var e = assertThrows(DriverException.InvalidArgument.class, () -> beneath.parent(target));
        assertTrue(e.getMessage().contains("symlink " + target.getParent()), "the walk names the symlink: " + e.getMessage());
        assertEquals(1 + 5, openat2Calls.get(), "the one call fails, the walk finds the symlink at the fifth name");
    }

    @ParameterizedTest(name = "openat2 {0}")
    @ValueSource(booleans = {true, false})
    void neverCreatesThroughASymlinkedParent(boolean openat2) throws IOException {
        Files.createDirectories(kubelet.resolve("pods"));
        Files.createSymbolicLink(kubelet.resolve("pods/uid"), outside);
        var e = assertThrows(DriverException.InvalidArgument.class,
                () -> beneath(openat2).createDirectories(kubelet.resolve("pods/uid/volumes/mount")));
        assertTrue(e.getMessage().contains("symlink " + kubelet.resolve("pods/uid")), e.getMessage());
        assertFalse(Files.exists(outside.resolve("volumes")));
    }

    @ParameterizedTest(name = "openat2 {0}")
    @ValueSource(booleans = {true, false})
    void neverRemovesThroughOrASymlink(boolean openat2) throws IOException {
        Path victim = Files.createDirectories(outside.resolve("mount"));
        Files.createDirectories(kubelet.resolve("pods/uid"));
        Files.createSymbolicLink(kubelet.resolve("pods/uid/volumes"), outside);
        Path link = Files.createSymbolicLink(kubelet.resolve("pods/uid/mount"), victim);
        Beneath beneath = beneath(openat2);
        assertThrows(DriverException.InvalidArgument.class, () -> beneath.remove(kubelet.resolve("pods/uid/volumes/mount")));
        assertThrows(DriverException.InvalidArgument.class, () -> beneath.remove(link));
        assertTrue(Files.isDirectory(victim));
        assertTrue(Files.isSymbolicLink(link), "a symlink is refused, not removed");
    }

    @ParameterizedTest(name = "openat2 {0}")
    @ValueSource(booleans = {true, false})
    void aFinalSymlinkIsOpenedAsNothingElse(boolean openat2) throws IOException {
        Files.createDirectories(kubelet.resolve("pods"));
        Files.createSymbolicLink(kubelet.resolve("pods/mount"), outside);
        Beneath beneath = beneath(openat2);
        try (Beneath.Parent parent = beneath.parent(kubelet.resolve("pods/mount"))) {
            assertThrows(DriverException.InvalidArgument.class, () -> beneath.open(parent, kubelet.resolve("pods/mount")));
        }
        assertThrows(DriverException.InvalidArgument.class, () -> beneath.openDirectory(kubelet.resolve("pods/mount")));
    }

    @Test
    void createsARegularFileOnceAndRefusesAnythingElseThere() throws IOException {
        Beneath beneath = beneath(true);
        Path file = kubelet.resolve("plugins/dev/pvc-1");
        beneath.createDirectories(file.getParent());
        beneath.createFile(file);
        beneath.createFile(file);
        assertTrue(Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS));
        Files.createSymbolicLink(kubelet.resolve("plugins/dev/link"), outside.resolve("created"));
        assertThrows(DriverException.InvalidArgument.class, () -> beneath.createFile(kubelet.resolve("plugins/dev/link")));
        assertFalse(Files.exists(outside.resolve("created")));
        assertTrue(beneath.remove(file));
    }
}
