package io.lvmqos.e2e.bench;

import io.lvmqos.e2e.guest.PublishBenchCheck;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.UmlGuest;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Issue 4: NodePublishVolume and NodeUnpublishVolume latency over the driver's socket in a
 * user-mode-Linux guest with cgroup v2, beside the same kernel work done without the driver (a
 * {@code mount --bind} + {@code umount} pair by fork/exec, mount(2) through the driver's own
 * Mounter, an io.max write). A benchmark: it reports, it does not assert times.
 * Run: mvn -pl test-e2e -am verify -Pbench -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=PublishBenchmark
 */
class PublishBenchmark {

    @Test
    void publishAndUnpublishLatency() throws Exception {
        UmlGuest.Builder guest = UmlGuest.builder()
                .name("bench-publish")
                .disk("4G")
                .volumeGroup("lvmqos", 0)
                .thinPool("lvmqos", "thinpool", "2G")
                .cgroup(CgroupMode.V2)
                .timeout(Duration.ofMinutes(30));
        GuestBench.run(guest, PublishBenchCheck.class, PublishBenchCheck.REPORT);
    }
}
