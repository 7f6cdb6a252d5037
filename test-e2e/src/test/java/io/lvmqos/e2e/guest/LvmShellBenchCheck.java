package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.bench.BenchReport.ms;
import static io.lvmqos.e2e.bench.BenchReport.percentile;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.e2e.bench.BenchReport;
import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Guest side of LvmShellBenchmark (issue 27, part 1, step 1): what one lvm command costs forked
 * on its own, as the driver runs it today, against the same command line fed to one long-lived
 * {@code lvm} in its shell mode (lvm reads commands on stdin; with {@code log/report_command_log}
 * each command's JSON report, its log included, goes to {@code LVM_REPORT_FD}, which delimits the
 * command's end). The commands are the driver's thin create (lvcreate with its options and five
 * tags), its whole-group lvs report and its lvremove; fork and shell alternate within each round so
 * both see the same state and load. Writes {@value #REPORT}.md; it measures, it asserts no times.
 */
public class LvmShellBenchCheck {

    public static final String REPORT = "lvm-shell";

    private static final int WARMUP = 3;
    private static final int ROUNDS = 30;
    private static final Duration COMMAND_TIMEOUT = Duration.ofMinutes(2);

    @BeforeAll
    static void onlyInTheGuest() {
        GuestEnv.assumeInGuest();
    }

    @Test
    void forkedAgainstShell() throws Exception {
        String vg = GuestEnv.volumeGroup();
        String pool = GuestEnv.thinPool().orElseThrow();
        Map<String, List<Double>> times = new LinkedHashMap<>();
        try (Shell shell = Shell.start()) {
            for (int i = 0; i < WARMUP + ROUNDS; i++) {
                boolean counted = i >= WARMUP;
                // alternate which goes first, so that neither always runs on the warmer cache
                for (String way : i % 2 == 0 ? List.of("fork", "shell") : List.of("shell", "fork")) {
                    String lv = "bench_" + way + "_" + i;
                    for (Map.Entry<String, List<String>> step : steps(vg, pool, lv).entrySet()) {
                        long t0 = System.nanoTime();
                        if (way.equals("fork")) {
                            List<String> argv = new ArrayList<>(List.of("lvm"));
                            argv.addAll(step.getValue());
                            GuestCommand.run(COMMAND_TIMEOUT, argv).requireSuccess();
                        } else {
                            shell.run(step.getValue());
                        }
                        double millis = (System.nanoTime() - t0) / 1e6;
                        if (counted) {
                            times.computeIfAbsent(step.getKey() + " " + way, k -> new ArrayList<>()).add(millis);
                        }
                    }
                }
            }
        }
        String left = GuestCommand.ok("lvm", "lvs", "--noheadings", "-o", "lv_name", vg);
        assertTrue(left.lines().map(String::strip).noneMatch(l -> l.startsWith("bench_")), left);
        BenchReport.writeTo(GuestEnv.outDir(), REPORT, report(times));
    }

    /** The driver's thin create, its whole-group report and its remove, in that order. */
    private static Map<String, List<String>> steps(String vg, String pool, String lv) {
        Map<String, List<String>> steps = new LinkedHashMap<>();
        steps.put("lvcreate", List.of("lvcreate", "--yes", "--activate", "y", "--name", lv, "--virtualsize",
                (64L << 20) + "b", "--thinpool", pool, "--addtag", "lvmqos.name=bench", "--addtag",
                "lvmqos.requested=67108864", "--addtag", "lvmqos.parameters=0123456789abcdef", "--addtag",
                "lvmqos.rbps=0", "--addtag", "lvmqos.ratio=10", "--", vg));
        steps.put("lvs", List.of("lvs", "--all", "--reportformat", "json", "--units", "b", "--nosuffix", "--binary",
                "-o", "lv_name,vg_name,lv_size,lv_attr,lv_tags,pool_lv,data_percent,metadata_percent,vg_extent_size,"
                        + "vg_free,vg_size", "--", vg));
        steps.put("lvremove", List.of("lvremove", "--yes", "--", vg + "/" + lv));
        return steps;
    }

    private static String report(Map<String, List<Double>> times) {
        StringBuilder md = new StringBuilder("## One lvm command forked against the same command in lvm's shell\n\n")
                .append("User-mode-Linux guest (kernel ").append(System.getProperty("os.version"))
                .append(", 1 CPU), zeroing thin pool, 64 MiB thin LVs; ").append(ROUNDS).append(" rounds after ")
                .append(WARMUP).append(" warm-up rounds, fork and shell alternating first.\n\n")
                .append("| command | fork p50 (ms) | shell p50 (ms) | shell / fork | fork p99 | shell p99 |\n")
                .append("|---|---|---|---|---|---|\n");
        for (String command : List.of("lvcreate", "lvs", "lvremove")) {
            double[] fork = array(times.get(command + " fork"));
            double[] shell = array(times.get(command + " shell"));
            double f = percentile(fork, 50);
            double s = percentile(shell, 50);
            md.append("| ").append(command).append(" | ").append(ms(f)).append(" | ").append(ms(s)).append(" | ")
                    .append(String.format("%.2f", s / f)).append(" | ").append(ms(percentile(fork, 99))).append(" | ")
                    .append(ms(percentile(shell, 99))).append(" |\n");
        }
        return md.toString();
    }

    private static double[] array(List<Double> values) {
        return values.stream().mapToDouble(Double::doubleValue).toArray();
    }

    /**
     * One long-lived lvm in shell mode: its report and command log on stdout (LVM_REPORT_FD=1),
     * ordinary output on stderr (LVM_OUT_FD=2), with the guest's lvm.conf plus command log reporting.
     */
    private static final class Shell implements AutoCloseable {
        private final Process process;
        private final Writer in;
        private final BufferedReader reports;

        private Shell(Process process) {
            this.process = process;
            this.in = process.outputWriter(StandardCharsets.UTF_8);
            this.reports = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        }

        static Shell start() throws IOException {
            Path system = Path.of(System.getenv("LVM_SYSTEM_DIR"));
            Path dir = Files.createTempDirectory("lvm-shell-bench");
            Files.writeString(dir.resolve("lvm.conf"), Files.readString(system.resolve("lvm.conf"))
                    + "log {\n    report_command_log = 1\n}\nreport {\n    output_format = \"json\"\n}\n");
            ProcessBuilder builder = new ProcessBuilder("lvm").redirectError(ProcessBuilder.Redirect.DISCARD);
            builder.environment().putAll(Map.of("LVM_SYSTEM_DIR", dir.toString(), "LVM_REPORT_FD", "1",
                    "LVM_OUT_FD", "2", "LVM_SUPPRESS_FD_WARNINGS", "1", "LC_ALL", "C"));
            return new Shell(builder.start());
        }

        /**
         * Feeds one command line, reads its report, then asks {@code lastlog} for its status: a
         * command's own report carries its log only when it failed, lastlog always ends with the
         * shell's status line for it (this is how lvmdbusd learns each command's outcome).
         */
        void run(List<String> argv) throws IOException {
            command(String.join(" ", argv));
            String status = command("lastlog").stream().filter(l -> l.contains("\"log_context\":\"shell\""))
                    .reduce((first, last) -> last).orElse("none");
            assertTrue(status.contains("\"log_message\":\"success\""), "shell: " + argv + " " + status);
        }

        /** One command's report: lvm writes one JSON object per command, its closing brace alone on a line. */
        private List<String> command(String line) throws IOException {
            in.write(line + "\n");
            in.flush();
            List<String> lines = new ArrayList<>();
            for (String read = reports.readLine(); read != null; read = reports.readLine()) {
                lines.add(read);
                if (read.equals("  }")) {
                    return lines;
                }
            }
            throw new IOException("the lvm shell ended during " + line + ": " + lines);
        }

        @Override
        public void close() throws Exception {
            in.close();
            assertTrue(process.waitFor(30, TimeUnit.SECONDS), "the lvm shell ends at end of input");
            assertEquals(0, process.exitValue());
        }
    }
}
