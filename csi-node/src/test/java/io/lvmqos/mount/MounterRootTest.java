package io.lvmqos.mount;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.device.RootRequired;
import io.lvmqos.errors.DriverException;
import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** mount(2) and umount2(2) through the JDK's foreign-function API on the host kernel, on tmpfs under a temporary directory. Needs root. */
class MounterRootTest {

    @TempDir
    Path dir;
    final PathMounter mounter = PathMounter.create();
    final MountTable table = new MountTable();
    final Deque<Path> mounted = new ArrayDeque<>();
    Process holder;
    Path source;

    @BeforeEach
    void mountSource() throws IOException {
        RootRequired.check();
        source = Files.createDirectory(dir.resolve("source"));
        mounter.mount(Path.of("lvmqos-test"), source, "tmpfs", Set.of(MountFlag.NOSUID, MountFlag.NODEV), "size=4m");
        mounted.push(source);
        Files.writeString(source.resolve("file"), "from the source");
    }

    @AfterEach
    void unmountEverything() throws Exception {
        if (holder != null) {
            holder.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
        Exception first = null;
        while (!mounted.isEmpty()) {
            Path path = mounted.pop();
            try {
                while (mounter.unmount(path) == UnmountOutcome.UNMOUNTED) {
                    // stacked mounts
                }
            } catch (RuntimeException e) {
                first = first == null ? e : first;
                // Last resort so that @TempDir can be deleted and the host is left clean.
                new ProcessBuilder("umount", "-l", path.toString()).inheritIO().start().waitFor();
            }
        }
        if (first != null) {
            throw first;
        }
    }

    private Path bindTarget(String name) throws IOException {
        Path target = Files.createDirectory(dir.resolve(name));
        mounted.push(target);
        return target;
    }

    @Test
    void aBindMountShowsTheSourceAndIsWritable() throws IOException {
        Path target = bindTarget("rw");
        mounter.bindMount(source, target, false);
        assertEquals("from the source", Files.readString(target.resolve("file")));
        Files.writeString(target.resolve("written"), "through the bind");
        assertEquals("through the bind", Files.readString(source.resolve("written")));
        assertFalse(table.at(target).orElseThrow().readOnly());
    }

    @Test
    void aReadOnlyBindMountRefusesWritesWithErofs() throws IOException {
        Path target = bindTarget("ro");
        mounter.bindMount(source, target, true);
        assertEquals("from the source", Files.readString(target.resolve("file")));
        var e = assertThrows(FileSystemException.class, () -> Files.writeString(target.resolve("file"), "x"));
        assertEquals("Read-only file system", e.getReason());
        assertThrows(FileSystemException.class, () -> Files.createFile(target.resolve("new")));
        Files.writeString(source.resolve("file"), "the source stays writable");

        MountEntry entry = table.at(target).orElseThrow();
        assertTrue(entry.readOnly());
        assertTrue(entry.options().containsAll(java.util.List.of("nosuid", "nodev")),
                "the remount kept the source's per-mount flags: " + entry.options());
    }

    @Test
    void aFailedReadOnlyRemountUndoesTheBind() throws IOException {
        Path target = bindTarget("undone");
        LibC real = NativeLibC.libc();
        AtomicInteger injected = new AtomicInteger();
        LibC remountFails = new ForwardingLibC(real) {
            @Override
            public int mount(String source, String target, String fstype, long flags, String data) {
                if ((flags & MountFlag.REMOUNT.bit()) != 0) {
                    injected.set(Errno.EACCES.intValue());
                    return -1;
                }
                injected.set(0);
                return real.mount(source, target, fstype, flags, data);
            }

            @Override
            public int umount2(String target, int flags) {
                injected.set(0);
                return real.umount2(target, flags);
            }

            @Override
            public int open(String path, int flags) {
                injected.set(0);
                return real.open(path, flags);
            }
        };
        PathMounter mounter = new PathMounter(remountFails,
                () -> injected.get() != 0 ? injected.get() : NativeLibC.lastError().getAsInt(),
                table, new ProcessScanner(Path.of("/proc")));

        var e = assertThrows(DriverException.FailedPrecondition.class, () -> mounter.bindMount(source, target, true));
        assertTrue(e.getMessage().contains("remounting the bind mount on " + target + " read-only failed: EACCES"),
                e.getMessage());
        assertTrue(table.at(target).isEmpty(), "the writable bind was undone");
    }

    @Test
    void unmountingABusyMountNamesTheProcessHoldingIt() throws Exception {
        Path target = bindTarget("busy");
        mounter.bindMount(source, target, false);
        holder = new ProcessBuilder("sleep", "60").directory(target.toFile()).start();
        waitForCwd(holder, target);

        var e = assertThrows(DriverException.FailedPrecondition.class, () -> mounter.unmount(target));
        assertTrue(e.getMessage().contains("pid " + holder.pid() + " (sleep) cwd"), e.getMessage());
        assertTrue(table.at(target).isPresent(), "still mounted: no lazy unmount");

        holder.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        assertEquals(UnmountOutcome.UNMOUNTED, mounter.unmount(target));
        assertTrue(table.at(target).isEmpty());
    }

    @Test
    void aMountBelowIsNamedAsTheHolder() throws IOException {
        Path target = bindTarget("parent");
        mounter.bindMount(source, target, false);
        Path child = Files.createDirectory(target.resolve("child"));
        mounter.mount(Path.of("lvmqos-test"), child, "tmpfs", Set.of(), "");
        mounted.push(child);
        var e = assertThrows(DriverException.FailedPrecondition.class, () -> mounter.unmount(target));
        assertTrue(e.getMessage().contains("mounts below it: [" + child + "]"), e.getMessage());
    }

    @Test
    void unmountingWhatIsNotMountedIsReportedDistinctly() throws IOException {
        Path plain = Files.createDirectory(dir.resolve("plain"));
        assertEquals(UnmountOutcome.NOT_A_MOUNT_POINT, mounter.unmount(plain));
        assertEquals(UnmountOutcome.NO_SUCH_PATH, mounter.unmount(dir.resolve("missing")));
    }

    @Test
    void unmountDoesNotFollowASymlinkToAMount() throws IOException {
        Path link = Files.createSymbolicLink(dir.resolve("link"), source);
        assertEquals(UnmountOutcome.NOT_A_MOUNT_POINT, mounter.unmount(link));
        assertTrue(table.at(source).isPresent());
    }

    @Test
    void neverMountsThroughASymlink() throws IOException {
        Path real = Files.createDirectory(dir.resolve("real"));
        Path link = Files.createSymbolicLink(dir.resolve("via-link"), real);
        var e = assertThrows(DriverException.FailedPrecondition.class,
                () -> mounter.bindMount(source, link, false));
        assertTrue(e.getMessage().contains("symlink"), e.getMessage());
        assertThrows(DriverException.InvalidArgument.class,
                () -> mounter.mount(Path.of("x"), Path.of(link + "/sub/.."), "tmpfs", Set.of(), ""), "not normalized");
        assertTrue(table.at(real).isEmpty());
        assertTrue(table.at(link).isEmpty());
    }

    @Test
    void neverMountsThroughASymlinkedParent() throws IOException {
        Path realParent = Files.createDirectories(dir.resolve("real-parent/sub"));
        Path linkParent = Files.createSymbolicLink(dir.resolve("link-parent"), realParent.getParent());
        var e = assertThrows(DriverException.FailedPrecondition.class,
                () -> mounter.mount(Path.of("x"), linkParent.resolve("sub"), "tmpfs", Set.of(), ""));
        assertTrue(e.getMessage().contains("resolves to " + realParent), e.getMessage());
        assertTrue(table.at(realParent).isEmpty());
    }

    @Test
    void aBadFilesystemOptionIsAnErrorWithTheKernelsReason() throws IOException {
        Path target = bindTarget("bad");
        var e = assertThrows(DriverException.class,
                () -> mounter.mount(Path.of("x"), target, "tmpfs", EnumSet.noneOf(MountFlag.class), "no_such_option"));
        assertTrue(e.getMessage().contains("EINVAL"), e.getMessage());
        assertTrue(e.getMessage().contains(target.toString()), e.getMessage());
        assertTrue(table.at(target).isEmpty());
    }

    @Test
    void aMissingTargetIsNotFound() {
        assertThrows(DriverException.NotFound.class, () -> mounter.bindMount(source, dir.resolve("missing"), true));
    }

    /**
     * Two hundred binds and unmounts in a row, each on the same target, leave nothing mounted.
     * The time per round is printed for the record, not held to a bound: a loaded host makes any
     * bound flaky, and the benchmarks (docs/benchmarks.md) are where times are measured.
     */
    @Test
    void repeatedBindAndUnmountLeaveNothingMounted() throws IOException {
        Path target = bindTarget("repeated");
        int rounds = 200;
        long started = System.nanoTime();
        for (int i = 0; i < rounds; i++) {
            mounter.bindMount(source, target, true);
            assertEquals(UnmountOutcome.UNMOUNTED, mounter.unmount(target), "round " + i);
        }
        System.out.printf("read-only bind mount + unmount: %.0f us per round%n",
                (System.nanoTime() - started) / 1000.0 / rounds);
        assertEquals(UnmountOutcome.NOT_A_MOUNT_POINT, mounter.unmount(target), "nothing left mounted");
    }

    private static void waitForCwd(Process process, Path cwd) throws Exception {
        Path link = Path.of("/proc", Long.toString(process.pid()), "cwd");
        for (int i = 0; i < 100; i++) {
            if (Files.exists(link) && Files.readSymbolicLink(link).equals(cwd)) {
                return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("sleep did not start in " + cwd);
    }
}
