package io.lvmqos.e2e.bench;

import io.lvmqos.e2e.uml.GuestJUnit;
import io.lvmqos.e2e.uml.GuestTestResult;
import io.lvmqos.e2e.uml.UmlGuest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Runs a guest-side measuring class ({@code *BenchCheck}) in one user-mode-Linux guest and brings
 * its table back: the guest writes {@code <name>.md} into its output directory, and this copies it
 * to target/bench and standard output with the host's load average before and after the run.
 * Returns the guest's output directory, for whatever else the check left there.
 */
final class GuestBench {

    private GuestBench() {
    }

    static Path run(UmlGuest.Builder guest, Class<?> check, String name) throws IOException {
        String loadBefore = BenchReport.loadAverage();
        long[] cpuBefore = BenchReport.hostCpuTicks();
        GuestJUnit.Report report;
        try (HostAwake awake = HostAwake.ifAsked()) {
            report = GuestJUnit.run(guest, check);
        }
        String loadAfter = BenchReport.loadAverage();
        String hostCpu = BenchReport.hostCpuBetween(cpuBefore, BenchReport.hostCpuTicks())
                + (HostAwake.asked() ? " (one nice-19 spinner per CPU kept the host's CPUs from idling: "
                + "-Dlvmqos.benchHostAwake=true)" : "");
        System.out.println("guest run: " + report.guest().timings() + " (" + report.guest().runDir() + ")");
        // a failed or skipped measurement throws here, with the guest's stack trace
        report.tests().forEach(GuestTestResult::verify);
        Path table = report.guest().outDir().resolve(name + ".md");
        if (!Files.isRegularFile(table)) {
            throw new AssertionError("the guest wrote no " + table + "; its output:\n"
                    + report.guest().consoleTail(60));
        }
        String markdown = Files.readString(table)
                + "\nHost: " + Runtime.getRuntime().availableProcessors() + " CPUs, load average (/proc/loadavg) "
                + "before the guest booted `" + loadBefore + "`, after it halted `" + loadAfter + "`; the host's CPUs "
                + "over the run (/proc/stat): " + hostCpu + "; guest "
                + report.guest().timings() + ".\n";
        BenchReport.write(name, markdown);
        return report.guest().outDir();
    }
}
