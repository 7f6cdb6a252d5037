package io.lvmqos.e2e;

import io.lvmqos.e2e.guest.QemuNodeCheck;
import io.lvmqos.e2e.qemu.QemuGuest;
import io.lvmqos.e2e.uml.GuestJUnit;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The second kind of test node: Debian's stock kernel under qemu (scripts/qemu.sh, {@link QemuGuest}),
 * proven in one boot by {@link QemuNodeCheck}: the kernel and its io.cost files, LVM with a thin pool on
 * the throttled virtio disk, a thin volume with a file system, io.max holding below a pod cgroup, and
 * the disk's own limit. {@code LVMQOS_SKIP_QEMU=1} skips it explicitly.
 */
class QemuNodeIT {

    @TestFactory
    Stream<DynamicTest> debianKernelNode() throws IOException {
        QemuGuest.Builder node = QemuGuest.builder()
                .name("qemu-node")
                .disk("4G")
                .diskIops(QemuGuest.DEFAULT_DISK_IOPS)
                .volumeGroup("lvmqos", 0)
                .thinPool("lvmqos", "thinpool", "2G");

        GuestJUnit.Report report = GuestJUnit.run(node, QemuNodeCheck.class);

        Path figures = report.guest().outDir().resolve("qemu-node.txt");
        if (Files.exists(figures)) {
            System.out.println("qemu node measured: " + String.join(", ", Files.readAllLines(figures)));
        }
        return GuestJUnit.dynamicTests(report);
    }
}
