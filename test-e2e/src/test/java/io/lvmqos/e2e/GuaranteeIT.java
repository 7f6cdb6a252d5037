package io.lvmqos.e2e;

import io.lvmqos.e2e.guest.GuaranteeCheck;
import io.lvmqos.e2e.qemu.QemuGuest;
import io.lvmqos.e2e.uml.GuestJUnit;
import java.io.IOException;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Weights and floors through the driver's own parameters, in the node whose kernel has io.cost
 * (Debian's stock kernel under qemu): {@link GuaranteeCheck} in one boot, its figures printed from
 * the run's guarantee.txt. The disk is throttled by qemu to {@value GuaranteeCheck#DISK_IOPS} IOPS;
 * the driver is told nothing of it: {@code lvmqos calibrate} measures the disk in the node first.
 */
class GuaranteeIT {

    @TestFactory
    Stream<DynamicTest> sharesAndFloorsOnAnIoCostNode() throws IOException {
        QemuGuest.Builder node = QemuGuest.builder()
                .name("guarantee")
                .disk("4G")
                .diskIops(GuaranteeCheck.DISK_IOPS)
                .cpus(2)
                .volumeGroup("lvmqos", 0)
                .thinPool("lvmqos", "thinpool", "2G")
                .timeout(Duration.ofMinutes(25));
        // -Dlvmqos.guarantee.qos="ctrl=user ... min=50 max=150" measures another QoS than the default
        String qos = System.getProperty("lvmqos.guarantee.qos", "");
        if (!qos.isBlank()) {
            node.env(GuaranteeCheck.QOS, qos);
        }
        GuestJUnit.Report report = GuestJUnit.run(node, GuaranteeCheck.class);
        report.printOutFile("guarantee.txt", "guarantee: ");
        return GuestJUnit.dynamicTests(report);
    }
}
