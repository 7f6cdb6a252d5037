package io.lvmqos.e2e;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.e2e.guest.CsiSanityCheck;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.GuestJUnit;
import io.lvmqos.e2e.uml.GuestTestResult;
import io.lvmqos.e2e.uml.UmlGuest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The external conformance run: kubernetes-csi's csi-sanity (the user's binary, v5.3.1 or later)
 * against the driver inside a user-mode-Linux node. Run through test-e2e/csi-sanity.sh; it is
 * skipped, visibly, when no binary is given (the JUnit conformance checks always run instead).
 */
class CsiSanityIT {

    @Test
    void csiSanityReportsNoFailures() throws Exception {
        String binary = System.getProperty("csi.sanity.binary", "");
        Assumptions.assumeFalse(binary.isBlank(), "no csi-sanity binary given (-Dcsi.sanity.binary=...)");
        Path path = Path.of(binary).toAbsolutePath();
        assertTrue(Files.isExecutable(path), path + " is not an executable file");
        UmlGuest.Builder guest = UmlGuest.builder()
                .name("csi-sanity")
                .disk("4G")
                .volumeGroup("lvmqos", 0)
                .thinPool("lvmqos", "thinpool", "3G")
                .cgroup(CgroupMode.V2)
                .env("LVMQOS_CSI_SANITY", path.toString())
                .env("LVMQOS_CSI_SANITY_ARGS", System.getProperty("csi.sanity.args", ""))
                .timeout(Duration.ofMinutes(45));
        GuestJUnit.Report report = GuestJUnit.run(guest, CsiSanityCheck.class);
        Path log = report.guest().outDir().resolve("csi-sanity.log");
        if (Files.exists(log)) {
            // csi-sanity's own summary, as it printed it
            Files.readAllLines(log).stream().dropWhile(l -> !l.startsWith("Ran ") && !l.contains("Summarizing"))
                    .forEach(System.out::println);
            System.out.println("full csi-sanity output: " + log);
        }
        report.tests().forEach(GuestTestResult::verify);
    }
}
