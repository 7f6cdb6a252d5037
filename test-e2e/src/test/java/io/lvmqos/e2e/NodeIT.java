package io.lvmqos.e2e;

import io.lvmqos.e2e.guest.DashboardCheck;
import io.lvmqos.e2e.guest.MetricsCheck;
import io.lvmqos.e2e.guest.ModifyCheck;
import io.lvmqos.e2e.guest.NodeCheck;
import io.lvmqos.e2e.guest.PropagationCheck;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.GuestJUnit;
import io.lvmqos.e2e.uml.UmlGuest;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/** The Node service and QoS measured with fio, under cgroup v2 and again under cgroup v1 blkio. */
class NodeIT {

    private static UmlGuest.Builder guest(String name, CgroupMode mode) {
        return UmlGuest.builder()
                .name(name)
                .disk("4G")
                .volumeGroup("lvmqos", 0)
                .thinPool("lvmqos", "thinpool", "2G")
                .cgroup(mode)
                .timeout(Duration.ofMinutes(20));
    }

    @TestFactory
    Stream<DynamicTest> nodeOnCgroupV2() {
        return GuestJUnit.dynamicTests(guest("node-v2", CgroupMode.V2), NodeCheck.class, PropagationCheck.class,
                MetricsCheck.class, DashboardCheck.class);
    }

    /**
     * The live change and the restart that follows it, in a guest of their own: twice, in a guest that
     * had already run the other checks, the DeleteVolume after the plugin's restart never returned
     * (cause not known yet); in fresh guests it has not happened in 14 runs. A short timeout keeps a
     * recurrence cheap, and the harness then dumps the guest's blocked tasks into console.log.
     */
    @TestFactory
    Stream<DynamicTest> liveChangeOnCgroupV2() {
        return GuestJUnit.dynamicTests(guest("modify-v2", CgroupMode.V2).timeout(Duration.ofMinutes(8)),
                ModifyCheck.class);
    }

    @TestFactory
    Stream<DynamicTest> nodeOnCgroupV1() {
        return GuestJUnit.dynamicTests(guest("node-v1", CgroupMode.V1), NodeCheck.class, MetricsCheck.class);
    }
}
