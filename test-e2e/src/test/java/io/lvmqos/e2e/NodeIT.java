package io.lvmqos.e2e;

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
        return GuestJUnit.dynamicTests(guest("node-v2", CgroupMode.V2), NodeCheck.class, PropagationCheck.class, ModifyCheck.class,
                MetricsCheck.class);
    }

    @TestFactory
    Stream<DynamicTest> nodeOnCgroupV1() {
        return GuestJUnit.dynamicTests(guest("node-v1", CgroupMode.V1), NodeCheck.class);
    }
}
