package io.lvmqos.e2e;

import io.lvmqos.e2e.guest.GroupSnapshotCheck;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.GuestJUnit;
import io.lvmqos.e2e.uml.UmlGuest;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/** Group snapshots of mounted thin volumes, frozen together, in a guest. */
class GroupSnapshotIT {

    @TestFactory
    Stream<DynamicTest> consistentGroupSnapshots() {
        UmlGuest.Builder guest = UmlGuest.builder()
                .name("group-snapshot")
                .disk("1G")
                .volumeGroup("lvmqos", 0)
                .thinPool("lvmqos", "thinpool", "768M")
                .cgroup(CgroupMode.V2)
                .timeout(Duration.ofMinutes(12));
        return GuestJUnit.dynamicTests(guest, GroupSnapshotCheck.class);
    }
}
