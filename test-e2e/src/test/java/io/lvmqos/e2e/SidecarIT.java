package io.lvmqos.e2e;

import io.lvmqos.e2e.deploy.DeployedSidecar;
import io.lvmqos.e2e.guest.SidecarCheck;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.GuestJUnit;
import io.lvmqos.e2e.uml.UmlGuest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * kubernetes-csi's node-driver-registrar and livenessprobe, the real programs, beside the driver in
 * one user-mode-Linux node ({@link SidecarCheck}), with the DaemonSet's arguments. The programs are
 * the workplace's static builds at ../shared/csi-tools beside the checkout (CI has them there); a
 * clone without them skips this test, visibly.
 */
class SidecarIT {

    @TestFactory
    Stream<DynamicTest> sidecarsBesideTheDriver() throws IOException {
        Path tools = DeployedSidecar.repository().getParent().resolve("shared/csi-tools");
        Assumptions.assumeTrue(Files.isExecutable(tools.resolve("node-driver-registrar"))
                && Files.isExecutable(tools.resolve("livenessprobe")), "no kubernetes-csi sidecars in " + tools);
        UmlGuest.Builder guest = UmlGuest.builder()
                .name("sidecars")
                .disk("1G")
                .volumeGroup("lvmqos", 0)
                .cgroup(CgroupMode.V2)
                .env(SidecarCheck.TOOLS, tools.toRealPath().toString())
                .timeout(Duration.ofMinutes(10));
        GuestJUnit.Report report = GuestJUnit.run(guest, SidecarCheck.class);
        report.printOutFile(SidecarCheck.REPORT, "sidecars: ");
        return GuestJUnit.dynamicTests(report);
    }
}
