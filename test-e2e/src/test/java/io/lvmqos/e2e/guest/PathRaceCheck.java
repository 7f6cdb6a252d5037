package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.guest.Csi2.create;
import static io.lvmqos.e2e.guest.Csi2.expectCode;
import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Hostile path swaps under NodePublishVolume and NodeUnpublishVolume. A second thread exchanges
 * (renameat2 RENAME_EXCHANGE, atomic) a directory on the target path with a symlink that points
 * outside the kubelet directory, in a loop, while the volume is published and unpublished 1000
 * times. Outside lives a tmpfs with a marker directory in it and one beside it. Whatever the
 * interleaving, nothing outside the kubelet directory may be mounted, unmounted or removed, each
 * call answers OK or a precise error, and no mount is left behind.
 */
public class PathRaceCheck {

    static final int CYCLES = Integer.getInteger("lvmqos.race.cycles", 1000);
    /**
     * Each read cycle is a stats and an expand call (an lvs behind the expand), about 150 ms in
     * the guest, so this loop runs fewer cycles than the publish loops. Against the code that read
     * by name, about half of the OK stats answers were of the outside tmpfs, so 300 cycles still
     * catch a regression many times over.
     */
    static final int READ_CYCLES = 300;
    private static final Path KUBELET = GuestDriver.KUBELET;
    private static final Path OUTSIDE = Path.of("/run/outside");
    /** A tmpfs mount point outside the kubelet directory, where a redirected unmount would land. */
    private static final Path OUTSIDE_MOUNT = OUTSIDE.resolve("tree/mount");
    private static final Path OUTSIDE_MARKER = OUTSIDE.resolve("tree/marker");
    private static final Path TMPFS_MARKER = OUTSIDE_MOUNT.resolve("marker");
    private static final Set<Status.Code> PRECISE = Set.of(Status.Code.INVALID_ARGUMENT,
            Status.Code.FAILED_PRECONDITION, Status.Code.NOT_FOUND);

    /** renameat2(2), which the JDK does not offer. */
    @FunctionalInterface
    public interface Rename {
        int renameat2(int oldDirFd, String oldPath, int newDirFd, String newPath, int flags);
    }

    private static final int AT_FDCWD = -100;
    private static final int RENAME_EXCHANGE = 2;

    @RegisterExtension
    static final DriverForTheClass driver = new DriverForTheClass().startedBySetUp();
    private static Rename rename;
    private static String volumeId;
    private static Path staging;
    private static int outsideMountId;
    private static Set<String> mountPointsOutside;

    @BeforeAll
    static void setUp() throws Exception {
        GuestEnv.assumeInGuest();
        // the C library this JVM runs on, as the driver binds it (NativeLibC)
        rename = renameat2();
        driver.start();
        Files.createDirectories(OUTSIDE_MOUNT);
        Files.createDirectories(OUTSIDE_MARKER);
        ok("mount", "-t", "tmpfs", "-o", "size=1m", "outside", OUTSIDE_MOUNT.toString());
        Files.createDirectories(TMPFS_MARKER);
        outsideMountId = mountIdAt(OUTSIDE_MOUNT);
        volumeId = driver.client().controller().createVolume(create("race", 16 * MIB,
                Map.of("lvmType", "thin")).build()).getVolume().getVolumeId();
        staging = KUBELET.resolve("plugins/kubernetes.io/csi/lvmqos.csi.io/race/globalmount");
        driver.client().node().nodeStageVolume(Csi.NodeStageVolumeRequest.newBuilder().setVolumeId(volumeId)
                .setStagingTargetPath(staging.toString()).setVolumeCapability(Csi2.mount()).build());
        mountPointsOutside = mountPointsOutsideKubelet();
    }

    private static Rename renameat2() {
        Linker linker = Linker.nativeLinker();
        MethodHandle handle = linker.downcallHandle(linker.defaultLookup().find("renameat2").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                        ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
        return (oldDirFd, oldPath, newDirFd, newPath, flags) -> {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment from = arena.allocateFrom(oldPath);
                MemorySegment to = arena.allocateFrom(newPath);
                return (int) handle.invokeExact(oldDirFd, from, newDirFd, to, flags);
            } catch (Throwable t) {
                throw new IllegalStateException("renameat2: " + t, t);
            }
        };
    }


    /** The target directory itself swapped with a symlink to the outside tmpfs's mount point. */
    @Test
    void swappingTheTargetDirectoryNeverReachesOutside() throws Exception {
        Path volumes = KUBELET.resolve("pods").resolve(UUID.randomUUID().toString())
                .resolve("volumes/kubernetes.io~csi/pv-race");
        Path target = volumes.resolve("mount");
        Files.createDirectories(target);
        Path decoy = Files.createSymbolicLink(volumes.resolve("mount-decoy"), OUTSIDE_MOUNT);
        race("target", target, target, decoy);
    }

    /** The target's parent swapped with a symlink to the outside directory that holds the tmpfs. */
    @Test
    void swappingTheTargetsParentNeverReachesOutside() throws Exception {
        Path csi = KUBELET.resolve("pods").resolve(UUID.randomUUID().toString()).resolve("volumes/kubernetes.io~csi");
        Path parent = csi.resolve("pv-race");
        Path target = parent.resolve("mount");
        Files.createDirectories(target);
        Path decoy = Files.createSymbolicLink(csi.resolve("pv-decoy"), OUTSIDE_MOUNT.getParent());
        race("parent", target, parent, decoy);
    }

    @Test
    void stagingOverKubeletsOwnFilesIsRefused() throws Exception {
        Path pki = Files.createDirectories(KUBELET.resolve("pki"));
        expectCode(Status.Code.INVALID_ARGUMENT, () -> driver.client().node().nodeStageVolume(
                Csi.NodeStageVolumeRequest.newBuilder().setVolumeId(volumeId).setStagingTargetPath(pki.toString())
                        .setVolumeCapability(Csi2.mount()).build()));
        assertTrue(mountsOfVolume().stream().noneMatch(m -> m.equals(pki.toString())), "nothing mounted on pki");
    }

    @Test
    void aVolumeStagedAtOnePathIsNotStagedAtASecond() throws Exception {
        Path second = KUBELET.resolve("plugins/kubernetes.io/csi/lvmqos.csi.io/race-second/globalmount");
        StatusRuntimeException refused = expectCode(Status.Code.FAILED_PRECONDITION,
                () -> driver.client().node().nodeStageVolume(Csi.NodeStageVolumeRequest.newBuilder()
                        .setVolumeId(volumeId).setStagingTargetPath(second.toString())
                        .setVolumeCapability(Csi2.mount()).build()));
        assertTrue(refused.getStatus().getDescription().contains(staging.toString()),
                "the answer names where the volume is staged: " + refused.getStatus());
        driver.client().node().nodeStageVolume(Csi.NodeStageVolumeRequest.newBuilder().setVolumeId(volumeId)
                .setStagingTargetPath(staging.toString()).setVolumeCapability(Csi2.mount()).build());
        assertEquals(List.of(staging.toString()), mountsOfVolume(), "staged once, at the first path");
    }

    /**
     * NodeGetVolumeStats and NodeExpandVolume of a published volume while its target's parent is
     * swapped with a symlink to the outside directory: every answer is about the volume (its
     * filesystem's size, never the 1 MiB outside tmpfs) or a precise error, and nothing outside
     * is touched.
     */
    @Test
    void readsThroughASwappedParentAreOfTheVolumeOrRefused() throws Exception {
        Path csi = KUBELET.resolve("pods").resolve(UUID.randomUUID().toString()).resolve("volumes/kubernetes.io~csi");
        Path parent = csi.resolve("pv-reads");
        Path target = parent.resolve("mount");
        Files.createDirectories(target);
        Path decoy = Files.createSymbolicLink(csi.resolve("pv-decoy"), OUTSIDE_MOUNT.getParent());
        driver.client().node().nodePublishVolume(publish(target));
        Map<Status.Code, Integer> stats = new EnumMap<>(Status.Code.class);
        Map<Status.Code, Integer> expands = new EnumMap<>(Status.Code.class);
        List<String> violations = new ArrayList<>();
        Map<String, String> examples = new TreeMap<>();
        long start = System.nanoTime();
        long swaps;
        try (Swapper swapper = new Swapper(parent, decoy)) {
            for (int cycle = 0; cycle < READ_CYCLES; cycle++) {
                int at = cycle;
                call(stats, examples, "stats", () -> {
                    long total = driver.client().node().nodeGetVolumeStats(Csi.NodeGetVolumeStatsRequest.newBuilder()
                            .setVolumeId(volumeId).setVolumePath(target.toString()).build()).getUsageList().stream()
                            .filter(u -> u.getUnit() == Csi.VolumeUsage.Unit.BYTES).findFirst().orElseThrow().getTotal();
                    if (total < 8 * MIB) {
                        violations.add("cycle " + at + ": stats answered a filesystem of " + total + " bytes, not the"
                                + " volume's");
                    }
                });
                call(expands, examples, "expand", () -> driver.client().node().nodeExpandVolume(
                        Csi.NodeExpandVolumeRequest.newBuilder().setVolumeId(volumeId).setVolumePath(target.toString())
                                .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(16 * MIB)).build()));
                violations.addAll(outsideDamage(cycle));
            }
            swaps = swapper.swaps();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        driver.client().node().nodeUnpublishVolume(unpublish(target));
        String report = String.format("reads under a parent swap: %d cycles in %.1f s, %d swaps; stats %s, expand %s;"
                        + " examples %s; violations %d%s%n", READ_CYCLES, seconds, swaps, stats, expands, examples,
                violations.size(), violations.stream().limit(10).collect(Collectors.joining("; ", " (", ")")));
        Files.writeString(GuestEnv.outDir().resolve("path-race.txt"), report, StandardCharsets.UTF_8,
                java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        System.out.print(report);
        assertEquals(List.of(), violations, report);
        assertTrue(stats.getOrDefault(Status.Code.OK, 0) > 0, "some stats answered: " + report);
        for (var codes : List.of(stats, expands)) {
            for (Status.Code code : codes.keySet()) {
                assertTrue(code == Status.Code.OK || PRECISE.contains(code), "an imprecise answer " + code + ": "
                        + report);
            }
        }
    }

    /**
     * Exchanges a directory with a symlink (renameat2 RENAME_EXCHANGE, atomic) in a loop on a
     * thread of its own until closed, then puts the directory back at its own name; the decoy
     * symlink must have survived.
     */
    private static final class Swapper implements AutoCloseable {
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final AtomicLong swaps = new AtomicLong();
        private final Path swapped;
        private final Path decoy;
        private final Thread thread;

        Swapper(Path swapped, Path decoy) {
            this.swapped = swapped;
            this.decoy = decoy;
            this.thread = new Thread(() -> {
                while (running.get()) {
                    if (rename.renameat2(AT_FDCWD, swapped.toString(), AT_FDCWD, decoy.toString(), RENAME_EXCHANGE)
                            == 0) {
                        swaps.incrementAndGet();
                    }
                    Thread.yield();
                }
            }, "swapper");
            thread.start();
        }

        long swaps() {
            return swaps.get();
        }

        @Override
        public void close() throws InterruptedException {
            running.set(false);
            thread.join();
            if (Files.isSymbolicLink(swapped) && Files.isDirectory(decoy, LinkOption.NOFOLLOW_LINKS)) {
                assertEquals(0, rename.renameat2(AT_FDCWD, swapped.toString(), AT_FDCWD, decoy.toString(),
                        RENAME_EXCHANGE), "swapped back");
            }
        }
    }

    private void race(String what, Path target, Path swapped, Path decoy) throws Exception {
        Map<Status.Code, Integer> publishes = new EnumMap<>(Status.Code.class);
        Map<Status.Code, Integer> unpublishes = new EnumMap<>(Status.Code.class);
        List<String> violations = new ArrayList<>();
        Map<String, String> examples = new TreeMap<>();
        long start = System.nanoTime();
        long swaps;
        try (Swapper swapper = new Swapper(swapped, decoy)) {
            for (int cycle = 0; cycle < CYCLES; cycle++) {
                call(publishes, examples, "publish", () -> driver.client().node().nodePublishVolume(publish(target)));
                call(unpublishes, examples, "unpublish", () -> driver.client().node().nodeUnpublishVolume(unpublish(target)));
                violations.addAll(outsideDamage(cycle));
            }
            swaps = swapper.swaps();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        if (!Files.isSymbolicLink(decoy)) {
            violations.add("the decoy symlink " + decoy + " was removed or replaced");
        }
        // the driver recovers: the raced path is unpublished, and then nothing of the volume is
        // mounted but its staging (a publish that landed on a renamed directory would show here)
        List<String> left = new ArrayList<>();
        try {
            driver.client().node().nodeUnpublishVolume(unpublish(target));
            left.addAll(mountsOfVolume().stream().filter(m -> !m.equals(staging.toString())).toList());
            Path sane = KUBELET.resolve("pods").resolve(UUID.randomUUID().toString())
                    .resolve("volumes/kubernetes.io~csi/pv-sane/mount");
            driver.client().node().nodePublishVolume(publish(sane));
            if (!mountsOfVolume().contains(sane.toString())) {
                violations.add("a sane path published OK but is not mounted");
            }
            driver.client().node().nodeUnpublishVolume(unpublish(sane));
        } catch (StatusRuntimeException e) {
            violations.add("after the race, a call on a sane path failed: " + e.getStatus());
        }
        for (String mount : mountsOfVolume()) {
            if (!mount.equals(staging.toString())) {
                violations.add("a mount of the volume is left at " + mount);
                unmountLeft(mount);
            }
        }
        String report = String.format("%s swap: %d cycles in %.1f s, %d swaps; publish %s, unpublish %s; "
                        + "examples %s; violations %d%s; mounts of the volume left %s%n", what, CYCLES, seconds,
                swaps, publishes, unpublishes, examples, violations.size(),
                violations.stream().limit(10).collect(Collectors.joining("; ", " (", ")")), left);
        Files.writeString(GuestEnv.outDir().resolve("path-race.txt"), report, StandardCharsets.UTF_8,
                java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        System.out.print(report);
        assertEquals(List.of(), violations, report);
        assertEquals(List.of(), left, "no mount of the volume is left but its staging: " + report);
        assertTrue(publishes.getOrDefault(Status.Code.OK, 0) > 0, "some publishes succeeded: " + report);
        for (var codes : List.of(publishes, unpublishes)) {
            for (Status.Code code : codes.keySet()) {
                assertTrue(code == Status.Code.OK || PRECISE.contains(code), "an imprecise answer " + code + ": "
                        + report);
            }
        }
    }

    /** A leaked mount is removed so that the next check starts clean. */
    private static void unmountLeft(String mount) {
        GuestCommand.run("umount", mount);
    }

    private interface Rpc {
        void run();
    }

    private static void call(Map<Status.Code, Integer> codes, Map<String, String> examples, String name, Rpc rpc) {
        Status.Code code = Status.Code.OK;
        try {
            rpc.run();
        } catch (StatusRuntimeException e) {
            code = e.getStatus().getCode();
            examples.putIfAbsent(name + " " + code, e.getStatus().getDescription());
        }
        codes.merge(code, 1, Integer::sum);
    }

    /** What a redirected call would have done outside: unmounted the tmpfs, removed a marker, mounted there. */
    private static List<String> outsideDamage(int cycle) throws IOException {
        List<String> found = new ArrayList<>();
        if (mountIdAtOrMinus(OUTSIDE_MOUNT) != outsideMountId) {
            found.add("cycle " + cycle + ": the tmpfs at " + OUTSIDE_MOUNT + " was unmounted");
            Files.createDirectories(OUTSIDE_MOUNT);
            ok("mount", "-t", "tmpfs", "-o", "size=1m", "outside", OUTSIDE_MOUNT.toString());
            Files.createDirectories(TMPFS_MARKER);
            outsideMountId = mountIdAt(OUTSIDE_MOUNT);
        }
        for (Path marker : List.of(OUTSIDE_MARKER, TMPFS_MARKER)) {
            if (!Files.isDirectory(marker, LinkOption.NOFOLLOW_LINKS)) {
                found.add("cycle " + cycle + ": " + marker + " was removed");
                Files.createDirectories(marker);
            }
        }
        Set<String> now = mountPointsOutsideKubelet();
        for (String added : now) {
            if (!mountPointsOutside.contains(added)) {
                found.add("cycle " + cycle + ": a mount appeared outside the kubelet directory at " + added);
                ok("umount", added);
            }
        }
        return found;
    }

    private static Csi.NodePublishVolumeRequest publish(Path target) {
        return Csi.NodePublishVolumeRequest.newBuilder().setVolumeId(volumeId)
                .setStagingTargetPath(staging.toString()).setTargetPath(target.toString())
                .setVolumeCapability(Csi2.mount()).build();
    }

    private static Csi.NodeUnpublishVolumeRequest unpublish(Path target) {
        return Csi.NodeUnpublishVolumeRequest.newBuilder().setVolumeId(volumeId).setTargetPath(target.toString())
                .build();
    }

    private static List<String[]> mountinfo() throws IOException {
        return Files.readAllLines(Path.of("/proc/self/mountinfo")).stream().map(l -> l.split(" ")).toList();
    }

    private static Set<String> mountPointsOutsideKubelet() throws IOException {
        return mountinfo().stream().map(f -> f[4])
                .filter(p -> !Path.of(p).startsWith(KUBELET)).collect(Collectors.toSet());
    }

    /** Where the volume's filesystem is mounted (its device number, from the staging mount). */
    private static List<String> mountsOfVolume() throws IOException {
        String device = mountinfo().stream().filter(f -> f[4].equals(staging.toString())).map(f -> f[2])
                .findFirst().orElseThrow(() -> new AssertionError("the volume is not staged at " + staging));
        return mountinfo().stream().filter(f -> f[2].equals(device)).map(f -> f[4]).toList();
    }

    private static int mountIdAt(Path mountPoint) throws IOException {
        int id = mountIdAtOrMinus(mountPoint);
        assertTrue(id >= 0, mountPoint + " is a mount point");
        return id;
    }

    private static int mountIdAtOrMinus(Path mountPoint) throws IOException {
        return mountinfo().stream().filter(f -> f[4].equals(mountPoint.toString()))
                .mapToInt(f -> Integer.parseInt(f[0])).reduce((a, b) -> b).orElse(-1);
    }
}
