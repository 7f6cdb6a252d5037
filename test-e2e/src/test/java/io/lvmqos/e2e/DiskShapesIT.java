package io.lvmqos.e2e;

import io.lvmqos.e2e.guest.DiskShapesCheck;
import io.lvmqos.e2e.qemu.QemuGuest;
import io.lvmqos.e2e.uml.GuestJUnit;
import java.io.IOException;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Guarantees on two disks unlike a constant throttle, in the qemu node with Debian's kernel, with
 * no model written by hand ({@link DiskShapesCheck}): "shaped" reads 600 and writes 200 operations
 * per second and moves at most 16 MiB/s, so large transfers are bound by bytes; "bursty" sustains
 * 300 operations per second after a burst of 1500 for up to 2 s. Its figures are printed from the
 * run's disk-shapes.txt.
 */
class DiskShapesIT {

    static final String SHAPED = "iops-read=600,iops-write=200,bps-total=16777216";
    static final String BURSTY = "iops-total=300,iops-total-max=1500,iops-total-max-length=2";

    @TestFactory
    Stream<DynamicTest> weightsAndFloorsOnCalibratedDisksOfTwoShapes() throws IOException {
        QemuGuest.Builder node = QemuGuest.builder()
                .name("disk-shapes")
                .disk("2G")
                .disk("2G")
                .diskShape(0, SHAPED)
                .diskShape(1, BURSTY)
                .cpus(2)
                .volumeGroup("shaped", 0)
                .volumeGroup("bursty", 1)
                .timeout(Duration.ofMinutes(25));
        GuestJUnit.Report report = GuestJUnit.run(node, DiskShapesCheck.class);
        report.printOutFile("disk-shapes.txt", "disk-shapes: ");
        return GuestJUnit.dynamicTests(report);
    }
}
