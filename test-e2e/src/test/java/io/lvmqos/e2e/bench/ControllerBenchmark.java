package io.lvmqos.e2e.bench;

import io.lvmqos.e2e.guest.ControllerBenchCheck;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.UmlGuest;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Issue 3: CreateVolume and DeleteVolume latency through the driver in a user-mode-Linux guest
 * (4 GiB VG lvmqos, 2 GiB thin pool), against the very lvm commands the driver ran for each call,
 * replayed by fork/exec in the same guest; and 50 concurrent thin creates and deletes. A
 * benchmark: it reports, it does not assert times.
 * Run: mvn -pl test-e2e -am verify -Pbench -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=ControllerBenchmark
 */
class ControllerBenchmark {

    @Test
    void createAndDeleteLatency() throws Exception {
        UmlGuest.Builder guest = UmlGuest.builder()
                .name("bench-controller")
                // 50 lvm processes at once beside two JVMs: more room than the default 1536M
                .memory("2048M")
                .disk("4G")
                .volumeGroup("lvmqos", 0)
                .thinPool("lvmqos", "thinpool", "2G")
                .cgroup(CgroupMode.V2)
                .timeout(Duration.ofMinutes(60));
        GuestBench.run(guest, ControllerBenchCheck.class, ControllerBenchCheck.REPORT);
    }
}
