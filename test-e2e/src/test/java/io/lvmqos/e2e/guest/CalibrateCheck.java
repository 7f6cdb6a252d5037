package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import io.lvmqos.guarantee.Calibration;
import io.lvmqos.guarantee.CostModel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * {@code lvmqos calibrate} on real LVM, where it must refuse (CalibrateIT's node): a busy disk, an LV
 * it cannot make, an LV of its name it did not make, a group over two disks; each with exit 1, its
 * reason, no tag written, the group's earlier calibration kept and no LV left behind. And the
 * paths GuaranteeIT does not take: through a thin pool, --dry-run, --if-uncalibrated. The
 * user-mode-Linux kernel has no io.cost, which the calibration does not need.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
public class CalibrateCheck {

    /** CalibrateIT's groups: one on one disk with a thin pool, one over two disks. */
    public static final String ONE_DISK = "cal";
    public static final String POOL = "pool";
    public static final String TWO_DISKS = "spread";
    private static final List<String> report = new ArrayList<>();

    @BeforeAll
    static void inTheGuest() {
        GuestEnv.assumeInGuest();
    }

    @AfterAll
    static void writeReport() throws Exception {
        if (GuestEnv.inGuest()) {
            Files.write(GuestEnv.outDir().resolve("calibrate.txt"), report, StandardCharsets.UTF_8);
        }
    }

    static GuestCommand.Result calibrate(String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--cgroup-root", GuestEnv.cgroupRoot().toString(), "--seconds", "1"));
        GuestCommand.Result result = IoCostPods.calibrate(all.toArray(String[]::new));
        report.add("lvmqos calibrate " + String.join(" ", args) + " -> exit " + result.exitCode() + "\n"
                + result.stdout().strip() + "\n" + result.stderr().strip());
        return result;
    }

    static List<String> tags(String group) {
        return List.of(ok("lvm", "vgs", "--noheadings", "-o", "vg_tags", group).strip().split(","));
    }

    static List<String> lvs(String group) {
        return ok("lvm", "lvs", "--noheadings", "-o", "lv_name", group).lines().map(String::strip)
                .filter(l -> !l.isEmpty()).toList();
    }

    @Test
    @Order(1)
    void throughAThinPoolTheVolumeIsWrittenOnceAndTheModelRecorded() throws Exception {
        GuestCommand.Result result = calibrate("--volume-group", ONE_DISK, "--thin-pool", POOL, "--size", "128Mi");
        assertEquals(0, result.exitCode(), result.stdout() + result.stderr());
        assertTrue(result.stdout().contains("writing the thin volume once"), result.stdout());
        CostModel model = Calibration.fromTags(tags(ONE_DISK)).orElseThrow().model();
        assertTrue(result.stdout().contains(model.settings()), "the line printed is the model recorded");
        assertFalse(lvs(ONE_DISK).contains("lvmqos_calibration"), "its LV is gone: " + lvs(ONE_DISK));
    }

    @Test
    @Order(2)
    void anAlreadyCalibratedGroupIsLeftAloneWhenAskedSoAndADryRunRecordsNothing() throws Exception {
        List<String> before = tags(ONE_DISK);
        GuestCommand.Result skip = calibrate("--volume-group", ONE_DISK, "--if-uncalibrated");
        assertEquals(0, skip.exitCode());
        assertTrue(skip.stdout().contains("nothing to do"), skip.stdout());
        GuestCommand.Result dry = calibrate("--volume-group", ONE_DISK, "--size", "64Mi", "--dry-run");
        assertEquals(0, dry.exitCode(), dry.stdout() + dry.stderr());
        assertTrue(dry.stdout().contains("--dry-run: not recorded"), dry.stdout());
        assertEquals(before, tags(ONE_DISK));
    }

    @Test
    @Order(3)
    void aBusyDiskIsRefusedAndNothingIsRecorded() throws Exception {
        List<String> before = tags(ONE_DISK);
        ok("lvm", "lvcreate", "--yes", "--name", "neighbour", "--size", "256m", ONE_DISK);
        Process neighbour = new ProcessBuilder("sh", "-c", "while :; do dd if=/dev/" + ONE_DISK + "/neighbour"
                + " of=/dev/null bs=1M iflag=direct status=none; done").start();
        try {
            TimeUnit.MILLISECONDS.sleep(500);
            GuestCommand.Result busy = calibrate("--volume-group", ONE_DISK, "--size", "64Mi");
            assertEquals(1, busy.exitCode(), busy.stdout() + busy.stderr());
            assertTrue(busy.stderr().contains("was busy while") && busy.stderr().contains("Nothing was recorded"),
                    busy.stderr());
        } finally {
            neighbour.descendants().forEach(ProcessHandle::destroy);
            neighbour.destroy();
            neighbour.waitFor();
        }
        assertEquals(before, tags(ONE_DISK), "the earlier calibration stays");
        assertFalse(lvs(ONE_DISK).contains("lvmqos_calibration"), "its LV is gone: " + lvs(ONE_DISK));
        ok("lvm", "lvremove", "--yes", ONE_DISK + "/neighbour");
    }

    @Test
    @Order(4)
    void anLvItCannotMakeIsRefusedWithWhatToDo() throws Exception {
        GuestCommand.Result tooBig = calibrate("--volume-group", ONE_DISK, "--size", "64Gi");
        assertEquals(1, tooBig.exitCode());
        assertTrue(tooBig.stderr().contains("cannot make the calibration's 65536 MiB LV")
                && tooBig.stderr().contains("--thin-pool"), tooBig.stderr());
        assertFalse(lvs(ONE_DISK).contains("lvmqos_calibration"));
    }

    @Test
    @Order(5)
    void anLvOfItsNameItDidNotMakeIsLeftAlone() throws Exception {
        ok("lvm", "lvcreate", "--yes", "--name", "lvmqos_calibration", "--size", "8m", ONE_DISK);
        GuestCommand.Result taken = calibrate("--volume-group", ONE_DISK, "--size", "64Mi");
        assertEquals(1, taken.exitCode());
        assertTrue(taken.stderr().contains("that calibrate did not make"), taken.stderr());
        assertTrue(lvs(ONE_DISK).contains("lvmqos_calibration"), "someone else's LV is not removed");
        ok("lvm", "lvremove", "--yes", ONE_DISK + "/lvmqos_calibration");
    }

    @Test
    @Order(6)
    void aGroupOverTwoDisksIsRefused() throws Exception {
        GuestCommand.Result spread = calibrate("--volume-group", TWO_DISKS, "--size", "64Mi");
        assertEquals(1, spread.exitCode());
        assertTrue(spread.stderr().contains("lies on 2 disks") && spread.stderr().contains("--io-cost-model"),
                spread.stderr());
        assertTrue(lvs(TWO_DISKS).isEmpty(), "nothing made: " + lvs(TWO_DISKS));
        assertTrue(Calibration.fromTags(tags(TWO_DISKS)).isEmpty());
    }
}
