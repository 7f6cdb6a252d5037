package io.lvmqos.e2e;

import io.lvmqos.e2e.guest.CalibrateCheck;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.GuestJUnit;
import io.lvmqos.e2e.uml.UmlGuest;
import java.io.IOException;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * {@code lvmqos calibrate}'s refusals and its thin-pool path on real LVM ({@link CalibrateCheck}):
 * a group with a thin pool on one disk, and a group over two disks. What each run printed is shown
 * from the run's calibrate.txt.
 */
class CalibrateIT {

    @TestFactory
    Stream<DynamicTest> calibrationOnRealLvm() throws IOException {
        UmlGuest.Builder guest = UmlGuest.builder()
                .name("calibrate")
                .disk("2G")
                .disk("512M")
                .disk("512M")
                .volumeGroup(CalibrateCheck.ONE_DISK, 0)
                .thinPool(CalibrateCheck.ONE_DISK, CalibrateCheck.POOL, "512M")
                .volumeGroup(CalibrateCheck.TWO_DISKS, 1, 2)
                .cgroup(CgroupMode.V2)
                .timeout(Duration.ofMinutes(10));
        GuestJUnit.Report report = GuestJUnit.run(guest, CalibrateCheck.class);
        report.printOutFile("calibrate.txt", "calibrate: ");
        return GuestJUnit.dynamicTests(report);
    }
}
