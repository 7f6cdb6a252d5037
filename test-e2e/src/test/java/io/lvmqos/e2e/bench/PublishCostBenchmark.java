package io.lvmqos.e2e.bench;

import io.lvmqos.e2e.guest.PublishCostCheck;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.UmlGuest;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Issue 40: NodePublishVolume as its client waits for it, with 10 volumes on the node, and the
 * system calls the driver makes for one publish, counted by strace in a user-mode-Linux guest with
 * cgroup v2; see {@link PublishCostCheck}. A benchmark: it reports, it does not assert times.
 * Run: mvn -pl test-e2e -am verify -Pbench -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=PublishCostBenchmark
 */
class PublishCostBenchmark {

    @Test
    void publishAsItsClientSeesItAndItsSystemCalls() throws Exception {
        UmlGuest.Builder guest = UmlGuest.builder()
                .name("bench-publish-cost")
                .disk("4G")
                .volumeGroup("lvmqos", 0)
                .thinPool("lvmqos", "thinpool", "2G")
                .cgroup(CgroupMode.V2)
                .timeout(Duration.ofMinutes(30));
        GuestBench.run(guest, PublishCostCheck.class, PublishCostCheck.REPORT);
    }
}
