package io.lvmqos.identity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.errors.DriverException;
import io.lvmqos.lvm.VolumeGroup;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Probe's verdict: not ready when lvm says a volume group is missing, or when lvm has left the check
 * unanswered past the bound; never because lvm is slow within it, or fails.
 */
class HealthCheckTest {

    private static final Optional<VolumeGroup> PRESENT = Optional.of(new VolumeGroup("vg0", 1L << 30, 1L << 29, 4L << 20));
    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final Runnable ANSWERS = () -> { };
    private static final Runnable TIMES_OUT = () -> {
        throw DriverException.deadlineExceeded("/usr/sbin/lvm vgs did not finish within 120000 ms and was killed");
    };

    /** What the fake lvm does next: answer with a group, answer "none", or fail. */
    private final AtomicReference<Runnable> failure = new AtomicReference<>(ANSWERS);
    private final AtomicReference<Optional<VolumeGroup>> answer = new AtomicReference<>(PRESENT);
    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final HealthCheck health = new HealthCheck(name -> {
        failure.get().run();
        return answer.get();
    }, List.of("vg0"), BOUND, now::get);

    private void advance(Duration time) {
        now.addAndGet(time.toNanos());
    }

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
    void aMissingVolumeGroupSaysWhatToDo() {
        answer.set(Optional.empty());

        String reason = health.check().reason().orElseThrow();

        assertTrue(reason.contains("create them, or keep the node plugin off this node"), reason);
        assertTrue(reason.contains("lvmqos.csi.io/volume-groups=true"), reason);
    }

    /** A node whose group is made after the plugin started needs no restart: the next check finds it. */
    @Test
    void aVolumeGroupMadeLaterTurnsProbeReadyAtTheNextCheck() {
        answer.set(Optional.empty());
        assertFalse(health.check().ready());
        assertFalse(health.verdict().ready());

        answer.set(PRESENT);

        assertTrue(health.check().ready());
        assertEquals(Optional.empty(), health.verdict().reason());
    }

    @Test
    void aMisconfigurationKeepsProbeNotReadyWhateverLvmAnswers() {
        health.misconfigured("/var/lib/kubelet/pods is not shared: mountPropagation: Bidirectional");

        health.check();

        HealthCheck.Verdict verdict = health.verdict();
        assertFalse(verdict.ready());
        assertTrue(verdict.reason().orElseThrow().contains("mountPropagation: Bidirectional"), verdict.toString());
    }

    @Test
    void anLvmThatTimesOutLeavesAReadyNodeReadyWithinTheBound() {
        health.check();
        failure.set(TIMES_OUT);

        advance(BOUND.minusSeconds(1));

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

        failure.set(ANSWERS);
        answer.set(PRESENT);
        assertEquals(new HealthCheck.Verdict(true, Optional.empty()), health.check());
    }

    @Test
    void aCheckStillRunningPastTheBoundIsNotReadyAndSaysHowLongLvmHasBeenSilent() throws Exception {
        CountDownLatch lockReleased = new CountDownLatch(1);
        CountDownLatch checkStarted = new CountDownLatch(1);
        failure.set(() -> {
            checkStarted.countDown();
            try {
                lockReleased.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        CompletableFuture<HealthCheck.Verdict> check = CompletableFuture.supplyAsync(health::check);
        assertTrue(checkStarted.await(10, TimeUnit.SECONDS));

        advance(BOUND);
        assertTrue(health.verdict().ready(), "at the bound lvm is slow, not stuck");

        advance(Duration.ofSeconds(2));
        HealthCheck.Verdict overdue = health.verdict();
        assertFalse(overdue.ready());
        assertTrue(overdue.reason().orElseThrow().contains("lvm has not answered for 32 s"), overdue.reason().orElseThrow());

        lockReleased.countDown();
        assertTrue(check.get(10, TimeUnit.SECONDS).ready());
        assertTrue(health.verdict().ready(), "lvm answered: ready again");
    }

    @Test
    void checksThatTimeOutOneAfterAnotherCountFromTheFirst() {
        health.check();
        failure.set(TIMES_OUT);
        health.check();
        advance(Duration.ofSeconds(20));
        health.check();
        advance(Duration.ofSeconds(20));

        HealthCheck.Verdict verdict = health.check();

        assertFalse(verdict.ready(), "40 s without an answer, though the last check began 20 s ago");
        assertTrue(verdict.reason().orElseThrow().contains("lvm has not answered for 40 s"), verdict.reason().orElseThrow());
    }

    @Test
    void anLvmThatFailsHasAnsweredAndStopsTheClock() {
        failure.set(TIMES_OUT);
        health.check();
        advance(BOUND.plusSeconds(5));
        assertFalse(health.verdict().ready());

        failure.set(() -> {
            throw DriverException.internal("lvm vgs failed (exit 5)");
        });

        assertTrue(health.check().ready(), "lvm answered, with an error: the last verdict stands");
    }

    @Test
    void startedWithADelayItChecksOnItsOwnThreadOnceTheDelayIsOver() throws InterruptedException {
        answer.set(Optional.empty());
        CountDownLatch checked = new CountDownLatch(1);
        HealthCheck delayed = new HealthCheck(name -> {
            checked.countDown();
            return answer.get();
        }, List.of("vg0"), BOUND, now::get);
        try {
            delayed.start(Duration.ofMillis(50), Duration.ofHours(1));
            assertTrue(checked.await(30, TimeUnit.SECONDS), "the first scheduled check ran");
            for (int i = 0; i < 3000 && delayed.verdict().ready(); i++) {
                Thread.sleep(10); // the verdict is set just after the lookup returns
            }
            assertFalse(delayed.verdict().ready(), "the scheduled check found the group missing");
            assertTrue(delayed.verdict().reason().orElseThrow().contains("[vg0] not found"));
        } finally {
            delayed.close();
        }
    }
}
