package io.lvmqos.e2e;

import io.lvmqos.e2e.guest.SystemdNodeCheck;
import io.lvmqos.e2e.qemu.QemuGuest;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.GuestJUnit;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The node as most production nodes with cgroup v2 are: systemd as PID 1 (Debian 12's, in the qemu
 * node with Debian's kernel), kubelet's and containerd's systemd cgroup driver, the driver's limits
 * held through what systemd, kubelet and the runtime do to the cgroups ({@link SystemdNodeCheck}).
 */
class SystemdNodeIT {

    @TestFactory
    Stream<DynamicTest> systemdNode() throws IOException, InterruptedException {
        Path images = ProjectImages.build();
        QemuGuest.Builder node = QemuGuest.builder()
                .name("systemd-node")
                .systemd()
                // two emulated CPUs: four pods' fio, containerd and the driver beside each other
                .cpus(2)
                .memory("3G")
                .disk("4G")
                .disk("2G") // containerd's content and snapshots
                .volumeGroup("lvmqos", 0)
                .thinPool("lvmqos", "thinpool", "2G")
                .cgroup(CgroupMode.V2)
                .env("LVMQOS_IMAGE_DIR", images.toString())
                .env("LVMQOS_REPOSITORY", ProjectImages.repository().toString())
                .timeout(Duration.ofMinutes(15));
        GuestJUnit.Report report = GuestJUnit.run(node, SystemdNodeCheck.class);
        report.printOutFile("systemd-node.txt", "systemd node: ");
        return GuestJUnit.dynamicTests(report);
    }
}
