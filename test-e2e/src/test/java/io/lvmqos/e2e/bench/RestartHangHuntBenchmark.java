package io.lvmqos.e2e.bench;

import io.lvmqos.e2e.guest.ModifyCheck;
import io.lvmqos.e2e.guest.NodeCheck;
import io.lvmqos.e2e.guest.PropagationCheck;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.GuestJUnit;
import io.lvmqos.e2e.uml.GuestTestResult;
import io.lvmqos.e2e.uml.UmlGuest;
import io.lvmqos.e2e.uml.UmlGuestException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Not a benchmark but a hunt, kept in the bench profile because it is long: the hang that
 * docs/test-bed.md describes (a DeleteVolume or CreateVolume after a plugin restart that never
 * returns) showed only in a guest that had already run many checks. Each round runs NodeCheck, PropagationCheck and ModifyCheck (which
 * restarts the plugin and deletes afterwards) in one guest with a 12-minute timeout, long enough for
 * every check to finish and short enough that a hang is caught, after which the harness dumps the
 * guest's blocked tasks into the round's console.log. The table says what each round did.
 *
 * <p>{@code mvn -B -pl test-e2e -am verify -Pbench -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false
 * -Dit.test=RestartHangHuntBenchmark -Dhunt.rounds=5}
 */
class RestartHangHuntBenchmark {

    private static final Duration GUEST_TIMEOUT = Duration.ofMinutes(12);

    @Test
    void huntTheHangAfterARestart() throws Exception {
        int rounds = Integer.getInteger("hunt.rounds", 5);
        StringBuilder table = new StringBuilder()
                .append("Restart-hang hunt: NodeCheck + PropagationCheck + ModifyCheck in one guest (cgroup v2), ")
                .append(rounds).append(" rounds, guest timeout ").append(GUEST_TIMEOUT.toMinutes()).append(" min; kernel ")
                .append(System.getenv().getOrDefault(UmlGuest.KERNEL_VARIABLE, "linux.uml on PATH"))
                .append("; host load before: ").append(BenchReport.loadAverage()).append("\n\n")
                .append("| round | outcome | guest wall (s) | failed checks | run directory |\n")
                .append("| --- | --- | --- | --- | --- |\n");
        int hangs = 0;
        for (int round = 1; round <= rounds; round++) {
            UmlGuest.Builder guest = UmlGuest.builder()
                    .name("hunt-" + round)
                    .disk("4G")
                    .volumeGroup("lvmqos", 0)
                    .thinPool("lvmqos", "thinpool", "2G")
                    .cgroup(CgroupMode.V2)
                    .timeout(GUEST_TIMEOUT);
            long started = System.nanoTime();
            String outcome;
            String failed = "";
            String runDir;
            try {
                GuestJUnit.Report report = GuestJUnit.run(guest, NodeCheck.class, PropagationCheck.class,
                        ModifyCheck.class);
                List<GuestTestResult> bad = report.tests().stream()
                        .filter(t -> t.status() == GuestTestResult.Status.FAILED
                                || t.status() == GuestTestResult.Status.ERRORED)
                        .toList();
                outcome = bad.isEmpty() ? "passed" : "checks failed";
                failed = bad.stream().map(GuestTestResult::displayName).collect(Collectors.joining(", "));
                runDir = report.guest().runDir().toString();
            } catch (UmlGuestException e) {
                boolean hang = e.failure() == UmlGuestException.Failure.PAYLOAD_TIMEOUT;
                hangs += hang ? 1 : 0;
                outcome = hang ? "**hung** (task dump in console.log)" : "guest failed: " + e.failure();
                runDir = e.runDir().map(Path::toString).orElse("");
                if (hang) {
                    System.out.println("round " + round + " hung; last console lines:\n" + e.getMessage());
                }
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            table.append("| ").append(round).append(" | ").append(outcome).append(" | ")
                    .append(String.format("%.0f", seconds)).append(" | ").append(failed).append(" | `")
                    .append(runDir).append("` |\n");
            BenchReport.writeTo(Path.of(System.getProperty("lvmqos.benchDir", "target/bench")), "restart-hang-hunt",
                    table.toString());
        }
        table.append("\n").append(hangs).append(" of ").append(rounds).append(" rounds hung.\n");
        BenchReport.write("restart-hang-hunt", table.toString());
    }
}
