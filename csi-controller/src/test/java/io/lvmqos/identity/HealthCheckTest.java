package io.lvmqos.identity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.errors.DriverException;
import io.lvmqos.lvm.VolumeGroup;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Probe's verdict: not ready only when lvm says a volume group is missing, never because lvm is slow. */
class HealthCheckTest {

    private static final Optional<VolumeGroup> PRESENT = Optional.of(new VolumeGroup("vg0", 1L << 30, 1L << 29, 4L << 20));

    /** What the fake lvm does next: answer with a group, answer "none", or fail. */
    private final AtomicReference<Runnable> failure = new AtomicReference<>(() -> { });
    private final AtomicReference<Optional<VolumeGroup>> answer = new AtomicReference<>(PRESENT);
    private final HealthCheck health = new HealthCheck(name -> {
        failure.get().run();
        return answer.get();
    }, List.of("vg0"));

    @Test
    void readyBeforeTheFirstCheckFinishes() {
        assertTrue(health.verdict().ready());
    }

    @Test
    void aMissingVolumeGroupIsNotReadyAndSaysWhich() {
        answer.set(Optional.empty());

        HealthCheck.Verdict verdict = health.check();

        assertFalse(verdict.ready());
        assertTrue(verdict.reason().orElseThrow().contains("[vg0] not found"), verdict.reason().orElseThrow());
    }

    @Test
    void anLvmThatTimesOutLeavesAReadyNodeReady() {
        health.check();
        failure.set(() -> {
            throw DriverException.deadlineExceeded("/usr/sbin/lvm vgs did not finish within 30000 ms and was killed");
        });

        assertTrue(health.check().ready());
    }

    @Test
    void anLvmThatFailsKeepsTheLastVerdictAndAnAnswerChangesIt() {
        answer.set(Optional.empty());
        health.check();
        failure.set(() -> {
            throw DriverException.internal("lvm vgs failed (exit 5)");
        });
        assertFalse(health.check().ready(), "still the last answer: the group was missing");

        failure.set(() -> { });
        answer.set(PRESENT);
        assertEquals(new HealthCheck.Verdict(true, Optional.empty()), health.check());
    }
}
