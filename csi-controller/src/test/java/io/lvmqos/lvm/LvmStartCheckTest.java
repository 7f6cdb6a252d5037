package io.lvmqos.lvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.CommandRunner;
import io.lvmqos.exec.Deadline;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The start's hold on changes, on a stand-in for lvm that appends each command's verb and LV to a
 * log: a call's change runs only after the start's checks, whose own changes run at once.
 */
class LvmStartCheckTest {

    @Test
    void aCallsChangeWaitsForTheStartsChecksWhoseOwnChangesRunAtOnce(@TempDir Path dir) throws Exception {
        Lvm lvm = new Lvm(new CommandRunner(), standIn(dir));
        lvm.holdChangesForStartCheck();
        CompletableFuture<Void> call = CompletableFuture.runAsync(() -> lvm.remove("vg", "from-a-call"),
                Thread::startVirtualThread);
        CountDownLatch checking = new CountDownLatch(1);
        CountDownLatch letTheChecksEnd = new CountDownLatch(1);
        Thread start = Thread.ofPlatform().start(() -> lvm.checkingAtStart(() -> {
            lvm.remove("vg", "from-the-start");
            checking.countDown();
            await(letTheChecksEnd);
        }));
        checking.await();
        assertFalse(call.isDone(), "the call's change waits while the start checks");
        assertEquals(List.of("lvremove vg/from-the-start"), log(dir));
        letTheChecksEnd.countDown();
        call.get(30, TimeUnit.SECONDS);
        start.join();
        assertEquals(List.of("lvremove vg/from-the-start", "lvremove vg/from-a-call"), log(dir));
    }

    /**
     * A call that holds the group's change turn around its change (as CreateVolume does) waits for
     * the start before it takes the turn, which the start's check needs: in CriIT a call took the
     * turn, then waited for the start, whose check waited for the turn, until the call's deadline.
     */
    @Test
    void aCallThatHoldsTheChangeTurnWaitsForTheStartBeforeTakingIt(@TempDir Path dir) throws Exception {
        Lvm lvm = new Lvm(new CommandRunner(), standIn(dir));
        lvm.holdChangesForStartCheck();
        Thread call = Thread.ofPlatform().start(() -> lvm.holdingChangeTurn("vg", () -> {
            lvm.remove("vg", "from-a-call");
            return null;
        }));
        while (call.getState() != Thread.State.WAITING && call.getState() != Thread.State.TIMED_WAITING) {
            Thread.onSpinWait();
        }
        Thread start = Thread.ofPlatform().start(() -> lvm.checkingAtStart(
                () -> lvm.holdingChangeTurn("vg", () -> {
                    lvm.remove("vg", "from-the-start");
                    return null;
                })));
        start.join(Duration.ofSeconds(60));
        call.join(Duration.ofSeconds(60));
        assertEquals(List.of("lvremove vg/from-the-start", "lvremove vg/from-a-call"), log(dir));
    }

    @Test
    void aCallWhoseDeadlinePassesFirstIsToldToRetry(@TempDir Path dir) throws Exception {
        Lvm lvm = new Lvm(new CommandRunner(Map.of(), () -> Deadline.after(Duration.ofMillis(200))), standIn(dir));
        lvm.holdChangesForStartCheck();
        DriverException refused = assertThrows(DriverException.Unavailable.class, () -> lvm.remove("vg", "late"));
        assertEquals(List.of(), log(dir), "nothing ran: " + refused.getMessage());
        lvm.checkingAtStart(() -> { });
        lvm.remove("vg", "late");
        assertEquals(List.of("lvremove vg/late"), log(dir));
    }

    @Test
    void checksThatFailStillLetTheChangesGo(@TempDir Path dir) throws Exception {
        Lvm lvm = new Lvm(new CommandRunner(), standIn(dir));
        lvm.holdChangesForStartCheck();
        assertThrows(IllegalStateException.class, () -> lvm.checkingAtStart(() -> {
            throw new IllegalStateException("a check failed");
        }));
        lvm.remove("vg", "after");
        assertEquals(List.of("lvremove vg/after"), log(dir));
    }

    private static Path standIn(Path dir) throws IOException {
        Path program = dir.resolve("lvm");
        Files.writeString(program, """
                #!/bin/sh
                for last; do :; done
                echo "$1 $last" >> "%s"
                """.formatted(dir.resolve("log")));
        Files.setPosixFilePermissions(program, PosixFilePermissions.fromString("rwx------"));
        return program;
    }

    private static List<String> log(Path dir) throws IOException {
        Path log = dir.resolve("log");
        return Files.exists(log) ? Files.readAllLines(log) : List.of();
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
