package io.lvmqos.e2e;

import io.lvmqos.e2e.guest.ExpansionCheck;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.GuestJUnit;
import io.lvmqos.e2e.uml.UmlGuest;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/** ControllerExpandVolume and NodeExpandVolume against real LVM, in a guest with a small VG and thin pool. */
class ExpansionIT {

    @TestFactory
    Stream<DynamicTest> expansionOnRealLvm() {
        UmlGuest.Builder guest = UmlGuest.builder()
                .name("expansion")
                .disk("1G")
                .volumeGroup("lvmqos", 0)
                .thinPool("lvmqos", "thinpool", "512M")
                .cgroup(CgroupMode.V2)
                .timeout(Duration.ofMinutes(10));
        return GuestJUnit.dynamicTests(guest, ExpansionCheck.class);
    }
}
