package io.lvmqos.e2e;

import io.lvmqos.e2e.guest.MountLookupCheck;
import io.lvmqos.e2e.guest.PathRaceCheck;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.GuestJUnit;
import io.lvmqos.e2e.uml.UmlGuest;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Hostile kubelet paths on a real kernel: swap races on publish targets, staging paths out of layout;
 * and one mount found by statmount(2) and by mountinfo alike.
 */
class SecurityIT {

    @TestFactory
    Stream<DynamicTest> pathsUnderAttack() {
        UmlGuest.Builder guest = UmlGuest.builder()
                .name("security")
                .disk("1G")
                .volumeGroup("lvmqos", 0)
                .thinPool("lvmqos", "thinpool", "256M")
                .cgroup(CgroupMode.V2)
                .timeout(Duration.ofMinutes(8));
        return GuestJUnit.dynamicTests(guest, PathRaceCheck.class, MountLookupCheck.class);
    }
}
