package io.lvmqos.e2e;

import io.lvmqos.e2e.guest.BurstCheck;
import io.lvmqos.e2e.guest.StuckDeviceCheck;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.GuestJUnit;
import io.lvmqos.e2e.uml.UmlGuest;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Issue 13 on a real kernel (a one-CPU user-mode-Linux guest): a call stuck in the kernel holds up
 * no other call, and a burst of 30 thin creates and deletes succeeds inside the DaemonSet's memory
 * limit. The burst of 100 is {@code BurstBenchmark}, in the bench profile.
 */
class ReliabilityIT {

    @TestFactory
    Stream<DynamicTest> reliabilityOnRealLvm() {
        UmlGuest.Builder guest = UmlGuest.builder()
                .name("reliability")
                .memory("2048M")
                .disk("4G")
                .disk("1G")
                .volumeGroup("lvmqos", 0)
                .thinPool("lvmqos", "thinpool", "2G")
                .volumeGroup("lvmqos-b", 1)
                .cgroup(CgroupMode.V2)
                .env(BurstCheck.CALLS_ENV, "30")
                .timeout(Duration.ofMinutes(20));
        return GuestJUnit.dynamicTests(guest, StuckDeviceCheck.class, BurstCheck.class);
    }
}
