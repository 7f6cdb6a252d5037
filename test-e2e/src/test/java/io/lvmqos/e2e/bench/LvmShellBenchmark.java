package io.lvmqos.e2e.bench;

import io.lvmqos.e2e.guest.LvmShellBenchCheck;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.UmlGuest;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Issue 27, part 1: one lvm command forked on its own against the same command in one long-lived
 * lvm shell, in a user-mode-Linux guest (4 GiB VG, 2 GiB zeroing thin pool). A benchmark: it
 * reports, it does not assert times.
 * Run: mvn -pl test-e2e -am verify -Pbench -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=LvmShellBenchmark
 */
class LvmShellBenchmark {

    @Test
    void forkedAgainstShell() throws Exception {
        UmlGuest.Builder guest = UmlGuest.builder()
                .name("bench-lvm-shell")
                .disk("4G")
                .volumeGroup("lvmqos", 0)
                .thinPool("lvmqos", "thinpool", "2G")
                .cgroup(CgroupMode.V2)
                .timeout(Duration.ofMinutes(30));
        GuestBench.run(guest, LvmShellBenchCheck.class, LvmShellBenchCheck.REPORT);
    }
}
