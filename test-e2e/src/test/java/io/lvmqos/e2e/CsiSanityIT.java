package io.lvmqos.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.lvmqos.e2e.guest.CsiSanityCheck;
import io.lvmqos.e2e.sanity.SanityReport;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.GuestJUnit;
import io.lvmqos.e2e.uml.GuestTestResult;
import io.lvmqos.e2e.uml.UmlGuest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The external conformance run: kubernetes-csi's csi-sanity (v5.4.0 or later) against the driver
 * inside a user-mode-Linux node. ./run-tests gives it the workplace's binary when there is one
 * beside the checkout (CI has it), test-e2e/csi-sanity.sh a binary of the user's; with none it is
 * skipped, visibly (the JUnit conformance checks always run instead).
 *
 * <p>Beyond csi-sanity's own exit code: at least {@value #MIN_PASSED} specs pass (what v5.4.0 runs
 * against this driver, so a spec quietly turned into a skip is noticed), none fails, and every spec
 * not run is printed with why it does not apply; a reason not explained below fails the test.
 */
class CsiSanityIT {

    /** csi-sanity v5.4.0 ran 81 of its 92 specs against lvmqos, all passed (2026-12-07). */
    static final int MIN_PASSED = 81;

    /** Why each reason csi-sanity gives for not running a spec does not concern this driver. */
    static final String NO_ATTACH = "lvmqos volumes are local to their node, so it does not advertise"
            + " PUBLISH_UNPUBLISH_VOLUME (optional in the CSI spec): there is nothing to attach or detach";
    static final Map<String, String> WHY_NOT_RUN = Map.of(
            "ControllerPublishVolume not supported", NO_ATTACH,
            "Controller Publish, UnpublishVolume not supported", NO_ATTACH,
            "ControllerUnpublishVolume not supported", NO_ATTACH,
            "pending in csi-test", "marked pending in csi-test's own source (PIt), so no driver runs it");

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
        if (!Files.exists(log)) {
            report.tests().forEach(GuestTestResult::verify);
            fail("csi-sanity left no output at " + log);
        }
        // csi-sanity's own summary, as it printed it
        Files.readAllLines(log).stream().dropWhile(l -> !l.startsWith("Ran ") && !l.contains("Summarizing"))
                .forEach(System.out::println);
        System.out.println("full csi-sanity output: " + log);
        report.tests().forEach(GuestTestResult::verify);
        SanityReport sanity = SanityReport.parse(Files.readAllLines(log))
                .orElseThrow(() -> new AssertionError("csi-sanity printed no closing summary: see " + log));
        for (SanityReport.NotRun spec : sanity.notRun()) {
            String why = WHY_NOT_RUN.get(spec.reason());
            System.out.println("not run: " + spec.spec() + "\n    csi-sanity: " + spec.reason() + "\n    why: "
                    + (why == null ? "NOT EXPLAINED" : why));
            assertTrue(why != null, "csi-sanity did not run \"" + spec.spec() + "\" (" + spec.reason()
                    + "), a reason CsiSanityIT does not explain: find out why and explain it in WHY_NOT_RUN");
        }
        assertEquals(0, sanity.failed(), "csi-sanity specs failed; see " + log);
        assertEquals(sanity.pending() + sanity.skipped(), sanity.notRun().size(),
                "every spec not run is listed with its reason: " + sanity.notRun());
        assertTrue(sanity.passed() >= MIN_PASSED, "only " + sanity.passed() + " csi-sanity specs passed, fewer than the "
                + MIN_PASSED + " v5.4.0 runs against this driver; see " + log);
    }
}
