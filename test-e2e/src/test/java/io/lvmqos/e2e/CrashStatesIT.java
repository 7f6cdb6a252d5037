package io.lvmqos.e2e;

import io.lvmqos.e2e.guest.CrashStatesCheck;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.GuestJUnit;
import io.lvmqos.e2e.uml.UmlGuest;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Issue 41, crash states replayed from a real write log ({@link CrashStatesCheck}): one guest whose
 * volume group sits on a dm-log-writes device runs a seeded workload through the driver, then
 * replays the log to sampled flush points and checks what the driver and lvm make of each.
 *
 * <p>System properties: {@code crash.states} ({@code all}, how many flush points, or {@code step:N}, every
 * point while step N of the seed's workload was in flight; 6 by default,
 * which keeps the run within a few minutes) and {@code crash.seed} (the seed a failed run printed, to
 * replay the same workload and the same sample; a fresh one each run by default).
 */
class CrashStatesIT {

    @TestFactory
    Stream<DynamicTest> everySampledFlushPointOfAWriteLog() throws IOException {
        String states = System.getProperty("crash.states", "6");
        long seed = Long.getLong("crash.seed", ThreadLocalRandom.current().nextLong(1, 1_000_000));
        System.out.println("crash states: seed " + seed + " (replay with -Dcrash.seed=" + seed + "), states " + states);
        boolean all = states.equals("all");
        GuestJUnit.Report report = GuestJUnit.run(UmlGuest.builder()
                .name("crash-states")
                .disk("1G") // the PV's disk, under the dm-log-writes device
                .disk("2G") // the write log
                .disk("1G") // the states, replayed one after another
                .disk("1G") // each state's throw-away changes (a dm snapshot's exceptions)
                .modules("dm-log-writes")
                .cgroup(CgroupMode.V2)
                // no volume group from init: the check makes it on the logged device
                .env("LVMQOS_VG", "lvmqos")
                .env("LVMQOS_VGS", "lvmqos")
                .env("LVMQOS_THIN_POOL", "thinpool")
                .env("LVMQOS_THIN_POOLS", "lvmqos/thinpool")
                .env("LVMQOS_CRASH_SEED", Long.toString(seed))
                .env("LVMQOS_CRASH_STATES", states)
                // about 20 s a state on a loaded 2-core host, twice that allowed; 143 flush points in the runs so far
                .timeout(Duration.ofMinutes(4).plusSeconds(40L * (all ? 300 : states.startsWith("step:")
                        ? 60 : Integer.parseInt(states)))),
                CrashStatesCheck.class);
        report.printOutFile("crash-report", "");
        return GuestJUnit.dynamicTests(report);
    }
}
