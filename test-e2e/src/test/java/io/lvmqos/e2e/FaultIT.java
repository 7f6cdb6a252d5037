package io.lvmqos.e2e;

import io.lvmqos.e2e.guest.DeviceFaultCheck;
import io.lvmqos.e2e.guest.FullThinPoolCheck;
import io.lvmqos.e2e.guest.KillDuringRpcCheck;
import io.lvmqos.e2e.guest.StopDuringLvmCheck;
import io.lvmqos.e2e.guest.TeardownWithoutLvmCheck;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.GuestJUnit;
import io.lvmqos.e2e.uml.UmlGuest;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/** Faults injected under the driver with the UML kernel's device-mapper fault targets, and a thin pool filled up. */
class FaultIT {

    @TestFactory
    Stream<DynamicTest> faultsOnTheNode() {
        UmlGuest.Builder guest = UmlGuest.builder()
                .name("faults")
                .disk("2G")
                .volumeGroup("lvmqos", 0)
                .thinPool("lvmqos", "thinpool", "1G")
                .cgroup(CgroupMode.V2)
                .modules("dm-flakey")
                .timeout(Duration.ofMinutes(15));
        return GuestJUnit.dynamicTests(guest, DeviceFaultCheck.class, KillDuringRpcCheck.class,
                TeardownWithoutLvmCheck.class, StopDuringLvmCheck.class, FullThinPoolCheck.class);
    }
}
