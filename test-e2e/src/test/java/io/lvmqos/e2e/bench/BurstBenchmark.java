package io.lvmqos.e2e.bench;

import io.lvmqos.e2e.guest.BurstCheck;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.UmlGuest;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Issue 13: 100 thin CreateVolume calls at once, then 100 DeleteVolume calls at once, against the
 * driver in a cgroup with the DaemonSet's memory limit and the shipped JVM flags, the client
 * retrying ABORTED and UNAVAILABLE as the external-provisioner does (its default --worker-threads
 * is 100); then the same 100 of each one after another. It asserts that every call succeeds, no
 * OOM kill and no LV left, and reports peak memory and wall times.
 * Run: mvn -pl test-e2e -am verify -Pbench -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=BurstBenchmark
 */
class BurstBenchmark {

    @Test
    void hundredCreatesAndDeletesAtOnce() throws Exception {
        UmlGuest.Builder guest = UmlGuest.builder()
                .name("bench-burst")
                // the client's 100 threads beside the driver: more room than the default
                .memory("2048M")
                .disk("4G")
                .volumeGroup("lvmqos", 0)
                .thinPool("lvmqos", "thinpool", "2G")
                .cgroup(CgroupMode.V2)
                .env(BurstCheck.CALLS_ENV, "100")
                .env(BurstCheck.IN_A_ROW_ENV, "true")
                .timeout(Duration.ofMinutes(60));
        GuestBench.run(guest, BurstCheck.class, BurstCheck.REPORT);
    }
}
