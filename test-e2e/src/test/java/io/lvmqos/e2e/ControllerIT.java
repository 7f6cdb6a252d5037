package io.lvmqos.e2e;

import io.lvmqos.e2e.guest.ConformanceCheck;
import io.lvmqos.e2e.guest.ControllerCheck;
import io.lvmqos.e2e.guest.HeldVolumeGroupLockCheck;
import io.lvmqos.e2e.guest.LongNodeNameCheck;
import io.lvmqos.e2e.guest.LvmMessagesCheck;
import io.lvmqos.e2e.guest.LvmShellCheck;
import io.lvmqos.e2e.guest.LvmShellMessagesCheck;
import io.lvmqos.e2e.guest.ResumableWipeCheck;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.GuestJUnit;
import io.lvmqos.e2e.uml.UmlGuest;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/** The Controller service against real LVM, inside a user-mode-Linux guest with two volume groups. */
class ControllerIT {

    @TestFactory
    Stream<DynamicTest> controllerOnRealLvm() {
        UmlGuest.Builder guest = UmlGuest.builder()
                .name("controller")
                .disk("4G")
                .disk("1G")
                .volumeGroup("lvmqos", 0)
                .thinPool("lvmqos", "thinpool", "2G")
                .volumeGroup("lvmqos-b", 1)
                .cgroup(CgroupMode.V2)
                .timeout(Duration.ofMinutes(Long.getLong("lvmqos.controllerTimeoutMinutes", 15)));
        return GuestJUnit.dynamicTests(guest, ControllerCheck.class, ConformanceCheck.class, LongNodeNameCheck.class,
                HeldVolumeGroupLockCheck.class, ResumableWipeCheck.class, LvmMessagesCheck.class,
                LvmShellMessagesCheck.class, LvmShellCheck.class);
    }
}
