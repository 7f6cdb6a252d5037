package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.CommandRunner;
import io.lvmqos.lvm.Lvm;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The driver's {@link Lvm} against the guest's real lvm in each failure that LvmFailureTest holds a
 * captured message for: the message lvm prints today must still be classified as that test expects,
 * so a new wording shows up here rather than as a wrong status code on a node. Every test removes
 * the LVs it made.
 */
public class LvmMessagesCheck {

    private static final long MIB = 1024 * 1024;
    private static Lvm lvm;
    private static String vg;
    /** Where the shells' configuration goes, when {@link LvmShellMessagesCheck} runs the same cases in shells. */
    static Path shellDir;

    @BeforeAll
    static void driversLvm() {
        GuestEnv.assumeInGuest();
        lvm = lvmWith(new CommandRunner());
        vg = GuestEnv.volumeGroup();
    }

    /** The driver's lvm as this run of the cases uses it: forked, or in shells. */
    static Lvm lvmWith(CommandRunner runner) {
        return shellDir == null ? Lvm.onThisHost(runner) : Lvm.withShells(runner, shellDir);
    }

    static void closeShells() {
        lvm.closeShells();
    }

    @AfterEach
    void removeWhatTheTestMade() {
        GuestCommand.run("dmsetup", "remove", "lvmmsg-holder");
        for (String lv : List.of("lvmmsg-a", "lvmmsg-a2", "lvmmsg-thin", "lvmmsg-pool")) {
            GuestCommand.run("lvm", "lvremove", "-q", "-y", vg + "/" + lv);
        }
    }

    /** Runs the call, expects lvm's failure as {@code kind}, and prints lvm's words for the run's log. */
    private static <T extends DriverException> T expect(Class<T> kind, Executable call) {
        T failure = assertThrows(kind, call);
        System.out.println("lvm said, as " + kind.getSimpleName() + ": " + failure.getMessage());
        return failure;
    }

    @Test
    void aMissingGroupOrLvIsAnEmptyReport() {
        assertEquals(Optional.empty(), lvm.volumeGroup("nosuchvg"));
        assertEquals(Optional.empty(), lvm.contents("nosuchvg"));
        assertEquals(Optional.empty(), lvm.logicalVolume(vg, "nosuchlv"));
        expect(DriverException.FailedPrecondition.class, () -> lvm.logicalVolume("nosuchvg", "lv"));
    }

    @Test
    void changesToWhatDoesNotExistAreNotFoundOrFailedPrecondition() {
        expect(DriverException.FailedPrecondition.class, () -> lvm.createLinear("nosuchvg", "lvmmsg-a", 8 * MIB, List.of()));
        expect(DriverException.NotFound.class, () -> lvm.extend(vg, "nosuchlv", 16 * MIB));
        expect(DriverException.NotFound.class, () -> lvm.activate(vg, "nosuchlv"));
        expect(DriverException.NotFound.class, () -> lvm.remove(vg, "nosuchlv"));
        assertFalse(lvm.removeIfPresent(vg, "nosuchlv"), "lvremove of an absent LV is told apart");
        expect(DriverException.FailedPrecondition.class, () -> lvm.removeIfPresent("nosuchvg", "lv"));
        expect(DriverException.NotFound.class, () -> lvm.replaceTags(vg, "nosuchlv", List.of(), List.of("a=b")));
        expect(DriverException.NotFound.class, () -> lvm.createThinSnapshot(vg, "nosuchorigin", "lvmmsg-thin", List.of(), false));
        expect(DriverException.FailedPrecondition.class, () -> lvm.createThin(vg, "nopool", "lvmmsg-thin", 8 * MIB, List.of()));
        lvm.createLinear(vg, "lvmmsg-a", 8 * MIB, List.of());
        expect(DriverException.FailedPrecondition.class, () -> lvm.createThin(vg, "lvmmsg-a", "lvmmsg-thin", 8 * MIB, List.of()));
    }

    /**
     * A thin LV whose device the pool lost (here deleted from the pool behind LVM's back; in RebootIT
     * by a power cut inside lvcreate) is told apart, and can still be removed.
     */
    @Test
    void aThinLvWhosePoolLostItsDeviceIsNotActivated() {
        String pool = GuestEnv.thinPool().orElseThrow();
        lvm.createThin(vg, pool, "lvmmsg-thin", 8 * MIB, List.of());
        String thinId = ok("lvm", "lvs", "--noheadings", "-o", "thin_id", vg + "/lvmmsg-thin").strip();
        ok("lvm", "lvchange", "-an", vg + "/lvmmsg-thin");
        ok("dmsetup", "message", vg + "-" + pool + "-tpool", "0", "delete " + thinId);
        assertFalse(lvm.activateIfInPool(vg, "lvmmsg-thin"));
        expect(DriverException.FailedPrecondition.class, () -> lvm.activate(vg, "lvmmsg-thin"));
        lvm.remove(vg, "lvmmsg-thin");
    }

    /**
     * A pool whose metadata and data LVs are active on their own, as an lvm killed inside the pool's
     * activation leaves them (here by component activations): lvm refuses to activate the pool around
     * them, naming one at a time, and the driver deactivates both and makes the thin LV all the same.
     */
    @Test
    void aPoolLeftHalfActivatedIsActivatedAfterItsComponentIsDeactivated() {
        ok("lvm", "lvcreate", "-q", "-y", "--type", "thin-pool", "-Z", "y", "-L", "8m", "-n", "lvmmsg-pool", vg);
        ok("lvm", "lvchange", "-an", vg + "/lvmmsg-pool");
        ok("lvm", "lvchange", "-ay", "-y", vg + "/lvmmsg-pool_tmeta");
        ok("lvm", "lvchange", "-ay", "-y", vg + "/lvmmsg-pool_tdata");
        GuestCommand.Result refused = GuestCommand.run("lvm", "lvcreate", "-q", "-y", "--virtualsize", "8m", "--thinpool",
                "lvmmsg-pool", "-n", "lvmmsg-thin", vg);
        assertFalse(refused.succeeded(), "lvm itself refuses while the component is active");
        System.out.println("lvm said, with the pool's metadata LV active: " + refused.stderr().strip());
        lvm.createThin(vg, "lvmmsg-pool", "lvmmsg-thin", 8 * MIB, List.of());
        assertTrue(ok("lvm", "lvs", "--noheadings", "-o", "lv_attr", vg + "/lvmmsg-thin").strip().charAt(4) == 'a',
                "the thin LV is made and active");
        lvm.remove(vg, "lvmmsg-thin");
    }

    @Test
    void aTakenNameIsAlreadyExists() {
        lvm.createLinear(vg, "lvmmsg-a", 8 * MIB, List.of());
        expect(DriverException.AlreadyExists.class, () -> lvm.createLinear(vg, "lvmmsg-a", 8 * MIB, List.of()));
    }

    @Test
    void noRoomInTheGroupOrAFullPoolIsResourceExhausted() throws Exception {
        long beyond = 64 * 1024 * MIB;
        expect(DriverException.ResourceExhausted.class, () -> lvm.createLinear(vg, "lvmmsg-a", beyond, List.of()));
        lvm.createLinear(vg, "lvmmsg-a", 8 * MIB, List.of());
        expect(DriverException.ResourceExhausted.class, () -> lvm.extend(vg, "lvmmsg-a", beyond));

        // --errorwhenfull: writes past the pool's end fail at once instead of queueing for a minute
        ok("lvm", "lvcreate", "-q", "-y", "--type", "thin-pool", "-L", "8m", "-n", "lvmmsg-pool", vg);
        ok("lvm", "lvchange", "-q", "--errorwhenfull", "y", vg + "/lvmmsg-pool");
        lvm.createThin(vg, "lvmmsg-pool", "lvmmsg-thin", 64 * MIB, List.of());
        GuestCommand.Result fill = GuestCommand.run("dd", "if=/dev/zero", "of=/dev/" + vg + "/lvmmsg-thin", "bs=1M",
                "count=16", "oflag=direct", "status=none");
        assertTrue(!fill.succeeded(), "16 MiB cannot fit an 8 MiB pool: " + fill);
        expect(DriverException.ResourceExhausted.class, () -> lvm.createThin(vg, "lvmmsg-pool", "lvmmsg-a2", 8 * MIB, List.of()));
        expect(DriverException.ResourceExhausted.class, () -> lvm.createThinSnapshot(vg, "lvmmsg-thin", "lvmmsg-a2", List.of(), false));
    }

    @Test
    void anLvThatIsMountedOpenOrHeldIsNotRemoved() throws Exception {
        lvm.createLinear(vg, "lvmmsg-a", 8 * MIB, List.of());
        String device = "/dev/" + vg + "/lvmmsg-a";
        ok("mkfs.ext4", "-q", device);
        Path mountPoint = Files.createDirectories(Path.of("/run/lvmmsg"));
        ok("mount", device, mountPoint.toString());
        try {
            expect(DriverException.FailedPrecondition.class, () -> lvm.remove(vg, "lvmmsg-a"));
        } finally {
            ok("umount", mountPoint.toString());
        }
        try (RandomAccessFile open = new RandomAccessFile(device, "r")) {
            expect(DriverException.FailedPrecondition.class, () -> lvm.remove(vg, "lvmmsg-a"));
        }
        ok("dmsetup", "create", "lvmmsg-holder", "--table", "0 16384 linear " + device + " 0");
        expect(DriverException.FailedPrecondition.class, () -> lvm.remove(vg, "lvmmsg-a"));
    }

    @Test
    void aLockLvmMayNotWaitForIsUnavailable() throws Exception {
        // The node's lvm.conf may tell lvm not to wait for locks; the guest's config with that one setting added.
        Path noWait = Files.createDirectories(Path.of("/run/lvm-nowait"));
        String config = Files.readString(Path.of(System.getenv("LVM_SYSTEM_DIR"), "lvm.conf"));
        Files.writeString(noWait.resolve("lvm.conf"), config.replace("global {", "global {\n    wait_for_locks = 0"));
        Lvm impatient = lvmWith(new CommandRunner().withEnvironment(Map.of("LVM_SYSTEM_DIR", noWait.toString())));
        try {
            try (HeldVolumeGroupLock held = HeldVolumeGroupLock.take()) {
                expect(DriverException.Unavailable.class, () -> impatient.volumeGroup(vg));
            }
            assertTrue(impatient.volumeGroup(vg).isPresent(), "the lock released, the same lvm answers");
        } finally {
            impatient.closeShells();
        }
    }
}
