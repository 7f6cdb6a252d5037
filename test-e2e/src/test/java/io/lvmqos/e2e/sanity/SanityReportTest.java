package io.lvmqos.e2e.sanity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.e2e.sanity.SanityReport.NotRun;
import java.util.List;
import org.junit.jupiter.api.Test;

/** csi-sanity's verbose output, as v5.4.0 printed it against lvmqos (abridged), read back. */
class SanityReportTest {

    static final List<String> OUTPUT = List.of(
            "------------------------------",
            "P [PENDING]",
            "Controller Service [Controller Server] ListVolumes pagination should detect volumes added between pages",
            "github.com/kubernetes-csi/csi-test/v5/pkg/sanity/controller.go:257",
            "------------------------------",
            "Controller Service [Controller Server] ControllerPublishVolume should fail when no volume id is provided",
            "github.com/kubernetes-csi/csi-test/v5/pkg/sanity/controller.go:734",
            "  STEP: creating mount and staging directories @ 12/07/26 00:31:44.361",
            "  [SKIPPED] in [BeforeEach] - github.com/kubernetes-csi/csi-test/v5/pkg/sanity/controller.go:730 @ 12/07/26",
            "S [SKIPPED] [0.006 seconds]",
            "Controller Service [Controller Server] ControllerPublishVolume [BeforeEach] should fail when no volume id is"
                    + " provided",
            "  [BeforeEach] github.com/kubernetes-csi/csi-test/v5/pkg/sanity/controller.go:728",
            "",
            "  [SKIPPED] ControllerPublishVolume not supported",
            "  In [BeforeEach] at: github.com/kubernetes-csi/csi-test/v5/pkg/sanity/controller.go:730 @ 12/07/26",
            "------------------------------",
            "Ran 81 of 92 Specs in 13.253 seconds",
            "SUCCESS! -- 81 Passed | 0 Failed | 1 Pending | 10 Skipped",
            "PASS");

    @Test
    void theClosingCountsAreRead() {
        SanityReport report = SanityReport.parse(OUTPUT).orElseThrow();
        assertEquals(81, report.passed());
        assertEquals(0, report.failed());
        assertEquals(1, report.pending());
        assertEquals(10, report.skipped());
    }

    @Test
    void eachSpecNotRunComesWithTheReasonPrinted() {
        List<NotRun> notRun = SanityReport.parse(OUTPUT).orElseThrow().notRun();
        assertEquals(2, notRun.size());
        assertEquals("pending in csi-test", notRun.get(0).reason());
        assertTrue(notRun.get(0).spec().startsWith("Controller Service [Controller Server] ListVolumes pagination"));
        assertEquals(new NotRun("Controller Service [Controller Server] ControllerPublishVolume should fail when no"
                + " volume id is provided", "ControllerPublishVolume not supported"), notRun.get(1));
    }

    @Test
    void aFailedRunIsReadAsFailed() {
        SanityReport report = SanityReport.parse(List.of("FAIL! -- 79 Passed | 2 Failed | 1 Pending | 10 Skipped"))
                .orElseThrow();
        assertEquals(2, report.failed());
        assertEquals(79, report.passed());
    }

    @Test
    void anOutputWithoutSummaryIsNoReport() {
        assertTrue(SanityReport.parse(List.of("panic: runtime error", "goroutine 1 [running]:")).isEmpty());
    }
}
