package io.lvmqos.e2e.bench;

import io.lvmqos.e2e.ChurnIT;
import io.lvmqos.e2e.guest.ChurnCheck;
import org.junit.jupiter.api.Test;

/**
 * Issue 26, part 2: the churn with kills of {@link ChurnCheck} for 30 minutes (or
 * {@code -Dlvmqos.churnSeconds=N}), reported in docs/benchmarks.md ("Churn"). The seed is new each
 * run unless the environment sets {@code LVMQOS_CHURN_SEED}.
 * Run: mvn -pl test-e2e -am verify -Pbench -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=ChurnBenchmark
 */
class ChurnBenchmark {

    @Test
    void halfAnHourOfChurnWithKills() throws Exception {
        long seconds = Long.getLong("lvmqos.churnSeconds", 1800);
        GuestBench.run(ChurnIT.guest("bench-churn", seconds), ChurnCheck.class, ChurnCheck.REPORT);
    }
}
