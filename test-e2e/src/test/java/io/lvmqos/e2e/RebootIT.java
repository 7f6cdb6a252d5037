package io.lvmqos.e2e;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.e2e.guest.RebootAfterCheck;
import io.lvmqos.e2e.guest.RebootBeforeCheck;
import io.lvmqos.e2e.guest.RebootJournal;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.GuestJUnit;
import io.lvmqos.e2e.uml.GuestRunDir;
import io.lvmqos.e2e.uml.GuestTestResult;
import io.lvmqos.e2e.uml.UmlGuest;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Issue 26, reboots: a node's guest set up and written ({@link RebootBeforeCheck}), then halted, or
 * killed with SIGKILL from the host while an lvcreate is stopped inside its run (at a moment drawn
 * from a seed the host chooses and prints), a wipe goes on and pods write; a second
 * guest boots on the same disk images and checks what came back ({@link RebootAfterCheck}).
 */
class RebootIT {

    static final String SEED_PROPERTY = "lvmqos.reboot.seed";

    private static UmlGuest.Builder node(String name) {
        return UmlGuest.builder()
                .name(name)
                .disk("2G")
                .volumeGroup("lvmqos", 0)
                .thinPool("lvmqos", "thinpool", "1G")
                .cgroup(CgroupMode.V2)
                .timeout(Duration.ofMinutes(6));
    }

    @TestFactory
    Stream<DynamicTest> cleanReboot() {
        GuestJUnit.Report before = GuestJUnit.run(node("reboot-clean").keepDisks(true)
                .env("LVMQOS_REBOOT_MODE", "clean"), RebootBeforeCheck.class);
        return Stream.concat(GuestJUnit.dynamicTests(before), bootAgain(before.guest().runDir()));
    }

    @TestFactory
    Stream<DynamicTest> powerCutDuringCreateWritesAndWipe() {
        long seed = seed();
        System.out.println("reboot: seed " + seed + " (replay with -D" + SEED_PROPERTY + "=" + seed + ")");
        UmlGuest.PowerCut cut = GuestJUnit.runUntilPowerCut(node("reboot-cut").keepDisks(true)
                .env("LVMQOS_REBOOT_MODE", "cut").env(RebootJournal.SEED_ENV, Long.toString(seed)),
                "cut-power-now", RebootBeforeCheck.class);
        System.out.println("power cut after " + cut.wallTime().toMillis() + " ms (" + cut.runDir() + ")");
        Path journal = GuestRunDir.outDir(cut.runDir()).resolve(RebootJournal.FILE);
        DynamicTest landed = DynamicTest.dynamicTest("the cut landed inside an lvcreate (seed " + seed + ")", () -> {
            OptionalLong pid = RebootJournal.landedIn(journal);
            assertTrue(pid.isPresent(), "seed " + seed + ": the journal names no lvcreate stopped inside its run: "
                    + journal);
            System.out.println("reboot: the cut landed inside lvcreate pid " + pid.getAsLong());
        });
        return Stream.concat(Stream.of(landed), bootAgain(cut.runDir()));
    }

    /** The seed of the cut's moment: {@code -Dlvmqos.reboot.seed} replays one; otherwise a new one each run. */
    private static long seed() {
        String given = System.getProperty(SEED_PROPERTY, "");
        return given.isBlank() ? new SecureRandom().nextLong() : Long.parseLong(given.strip());
    }

    /** The second boot; the disks are deleted once it has passed, and kept (in the first run's directory) if not. */
    private static Stream<DynamicTest> bootAgain(Path firstRun) {
        GuestJUnit.Report after = GuestJUnit.run(node("reboot-after").reuseDisks(firstRun)
                .env("LVMQOS_REBOOT_JOURNAL", GuestRunDir.outDir(firstRun).resolve("reboot-journal").toString()),
                RebootAfterCheck.class);
        if (after.tests().stream().allMatch(test -> test.status() == GuestTestResult.Status.PASSED)) {
            GuestRunDir.deleteDisks(firstRun, 1);
        }
        return GuestJUnit.dynamicTests(after);
    }
}
