package io.lvmqos.e2e;

import io.lvmqos.e2e.guest.ChurnCheck;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.GuestJUnit;
import io.lvmqos.e2e.uml.UmlGuest;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Issue 26, part 2, in CI: three minutes of {@link ChurnCheck} (20 pods, every volume call in a
 * random mix, the driver and its lvm children SIGKILLed at random moments, invariants read from
 * the OS after every step; it fails unless it killed the driver and an lvm child at least once).
 * The host chooses a new seed each run and prints it, unless {@code LVMQOS_CHURN_SEED} is set, which
 * replays a failure's steps; {@code -Dlvmqos.churnSeconds=N} runs it for another time. The 30-minute run is {@code ChurnBenchmark}, in the bench profile.
 */
public class ChurnIT {

    @TestFactory
    Stream<DynamicTest> churnWithKills() {
        return GuestJUnit.dynamicTests(guest("churn", Long.getLong("lvmqos.churnSeconds", 180)), ChurnCheck.class);
    }

    /** The churn's node: one 4 GiB disk, a 2 GiB thin pool and room for linear volumes beside it. */
    public static UmlGuest.Builder guest(String name, long seconds) {
        UmlGuest.Builder guest = UmlGuest.builder()
                .name(name)
                .memory("2048M")
                .disk("4G")
                .volumeGroup("lvmqos", 0)
                .thinPool("lvmqos", "thinpool", "2G")
                .cgroup(CgroupMode.V2)
                .env(ChurnCheck.SECONDS_ENV, Long.toString(seconds))
                .timeout(Duration.ofSeconds(seconds).plus(Duration.ofMinutes(15)));
        String given = System.getenv(ChurnCheck.SEED_ENV);
        long seed = given == null || given.isBlank() ? new SecureRandom().nextLong() : Long.parseLong(given.strip());
        System.out.println(name + ": seed " + seed + " (replay with " + ChurnCheck.SEED_ENV + "=" + seed + ")");
        return guest.env(ChurnCheck.SEED_ENV, Long.toString(seed));
    }
}
