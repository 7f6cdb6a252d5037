package io.lvmqos.e2e;

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
 * no other call.
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
                .timeout(Duration.ofMinutes(20));
        return GuestJUnit.dynamicTests(guest, StuckDeviceCheck.class);
    }
}
