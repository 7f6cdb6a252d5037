package io.lvmqos.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.errors.DriverException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Runs real programs of this machine; /bin/sh here is the test's tool for making a child misbehave. */
class CommandRunnerTest {

    static final Duration GENEROUS = Duration.ofSeconds(10);
    static final Path SH = Path.of("/bin/sh");

    final CommandRunner runner = new CommandRunner();

    @TempDir
    Path dir;

    static Command sh(Duration timeout, String script) {
        return Command.of(SH, timeout, "-c", script);
    }

    static Set<Long> liveChildren() {
        return ProcessHandle.current().children().filter(ProcessHandle::isAlive).map(ProcessHandle::pid)
                .collect(Collectors.toSet());
    }

    /** Gone: no such process, or a zombie waiting for a reaper that is not ours. */
    static boolean gone(long pid) {
        if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
            try {
                String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
                return stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z");
            } catch (IOException e) {
                return true;
            }
        }
        return true;
    }

    static boolean goneWithin(long pid, Duration wait) throws InterruptedException {
        long until = System.nanoTime() + wait.toNanos();
        while (!gone(pid) && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        return gone(pid);
    }

    static long pidIn(Path file) throws IOException, InterruptedException {
        for (int i = 0; i < 100 && (!Files.exists(file) || Files.readString(file).isBlank()); i++) {
            Thread.sleep(10);
        }
        return Long.parseLong(Files.readString(file).strip());
    }

    @Test
    void aProgramThatSucceedsExitsZero() {
        CommandResult result = runner.run(Command.of(Path.of("/bin/true"), GENEROUS));
        assertEquals(0, result.exitCode());
        assertTrue(result.succeeded());
    }

    @Test
    void aProgramThatFailsKeepsItsExitCode() {
        CommandResult result = runner.run(Command.of(Path.of("/bin/false"), GENEROUS));
        assertEquals(1, result.exitCode());
        assertFalse(result.succeeded());
    }

    @Test
    void argumentsArePassedAsTheyAre() {
        CommandResult result = runner.run(Command.of(Path.of("/bin/echo"), GENEROUS, "hello", "two words", "$HOME", "*"));
        assertEquals("hello two words $HOME *\n", result.stdout());
        assertEquals("", result.stderr());
    }

    @Test
    void bothStreamsAndTheExitCodeAreCaptured() {
        CommandResult result = runner.run(sh(GENEROUS, "echo out; echo err >&2; exit 3"));
        assertEquals(3, result.exitCode());
        assertEquals("out\n", result.stdout());
        assertEquals("err\n", result.stderr());
    }

    @Test
    void largeOutputOnBothStreamsDoesNotBlockTheChild() {
        CommandResult result = assertTimeoutPreemptively(GENEROUS,
                () -> runner.run(sh(GENEROUS, "seq 1 100000 >&2; seq 1 100000")));
        assertEquals(0, result.exitCode());
        assertTrue(result.stdout().endsWith("\n100000\n"));
        assertEquals(result.stdout(), result.stderr());
    }

    @Test
    void theChildRunsInTheCLocale() {
        List<String> environment = runner.run(Command.of(Path.of("/usr/bin/env"), GENEROUS)).stdout().lines().toList();
        assertTrue(environment.contains("LC_ALL=C"), environment.toString());
    }

    @Test
    void extraEnvironmentReachesTheChild() {
        CommandRunner configured = new CommandRunner().withEnvironment(Map.of("LVM_SYSTEM_DIR", "/etc/lvmqos/lvm"));
        List<String> environment = configured.run(Command.of(Path.of("/usr/bin/env"), GENEROUS)).stdout().lines()
                .toList();
        assertTrue(environment.contains("LVM_SYSTEM_DIR=/etc/lvmqos/lvm"), environment.toString());
    }

    @Test
    void theChildReadsAnEmptyStandardInput() {
        CommandResult result = assertTimeoutPreemptively(GENEROUS,
                () -> runner.run(Command.of(Path.of("/bin/cat"), GENEROUS)));
        assertEquals("", result.stdout());
    }

    @Test
    void aChildPastItsTimeoutIsAbortedAsDeadlineExceeded() {
        long started = System.nanoTime();
        assertThrows(DriverException.DeadlineExceeded.class,
                () -> runner.run(Command.of(Path.of("/bin/sleep"), Duration.ofMillis(200), "30")));
        assertTrue(Duration.ofNanos(System.nanoTime() - started).compareTo(Duration.ofSeconds(3)) < 0);
    }

    @Test
    void aChildPastItsTimeoutIsKilled() {
        Set<Long> before = liveChildren();
        assertThrows(DriverException.DeadlineExceeded.class,
                () -> runner.run(Command.of(Path.of("/bin/sleep"), Duration.ofMillis(200), "30")));
        Set<Long> after = liveChildren();
        after.removeAll(before);
        assertEquals(Set.of(), after);
    }

    @Test
    void aChildPastItsTimeoutIsKilledByPid() throws Exception {
        Path pidFile = dir.resolve("pid");
        assertThrows(DriverException.DeadlineExceeded.class,
                () -> runner.run(sh(Duration.ofMillis(300), "echo $$ > " + pidFile + "; exec /bin/sleep 30")));
        assertTrue(goneWithin(pidIn(pidFile), Duration.ofSeconds(2)));
    }

    @Test
    void theChildsDescendantsAreKilledToo() throws Exception {
        Path pidFile = dir.resolve("pid");
        assertThrows(DriverException.DeadlineExceeded.class,
                () -> runner.run(sh(Duration.ofMillis(300), "/bin/sleep 30 & echo $! > " + pidFile + "; wait")));
        assertTrue(goneWithin(pidIn(pidFile), Duration.ofSeconds(2)));
    }

    @Test
    void theDeadlineMessageNamesTheCommand() {
        DriverException e = assertThrows(DriverException.DeadlineExceeded.class,
                () -> runner.run(Command.of(Path.of("/bin/sleep"), Duration.ofMillis(100), "30")));
        assertTrue(e.getMessage().contains("/bin/sleep 30"), e.getMessage());
    }

    @Test
    void aShorterDeadlineWinsOverTheCommandTimeout() {
        long started = System.nanoTime();
        assertThrows(DriverException.DeadlineExceeded.class, () -> runner.run(
                Command.of(Path.of("/bin/sleep"), Duration.ofSeconds(30), "30"), Deadline.after(Duration.ofMillis(200))));
        assertTrue(Duration.ofNanos(System.nanoTime() - started).compareTo(Duration.ofSeconds(3)) < 0);
    }

    @Test
    void aLongerDeadlineLeavesTheCommandTimeoutInForce() {
        long started = System.nanoTime();
        assertThrows(DriverException.DeadlineExceeded.class, () -> runner.run(
                Command.of(Path.of("/bin/sleep"), Duration.ofMillis(200), "30"), Deadline.after(Duration.ofSeconds(30))));
        assertTrue(Duration.ofNanos(System.nanoTime() - started).compareTo(Duration.ofSeconds(3)) < 0);
    }

    @Test
    void aDeadlineAlreadyPassedRunsNothing() {
        Path marker = dir.resolve("ran");
        assertThrows(DriverException.DeadlineExceeded.class, () -> runner.run(
                Command.of(Path.of("/usr/bin/touch"), GENEROUS, marker.toString()), Deadline.after(Duration.ofSeconds(-1))));
        assertFalse(Files.exists(marker));
    }

    @Test
    void withoutADeadlineGivenTheRunnerKeepsTheCallsDeadline() {
        Path marker = dir.resolve("ran");
        CommandRunner serving = new CommandRunner(Map.of(), () -> Deadline.after(Duration.ofSeconds(-1)));
        assertThrows(DriverException.DeadlineExceeded.class, () -> serving.run(
                Command.of(Path.of("/usr/bin/touch"), GENEROUS, marker.toString())));
        assertThrows(DriverException.DeadlineExceeded.class, () -> serving.withEnvironment(Map.of("A", "1")).run(
                Command.of(Path.of("/usr/bin/touch"), GENEROUS, marker.toString())));
        assertFalse(Files.exists(marker));
        assertTrue(serving.run(Command.of(Path.of("/usr/bin/touch"), GENEROUS, marker.toString()), Deadline.NONE)
                .succeeded(), "a deadline given explicitly is the one kept");
        assertTrue(Files.exists(marker));
    }

    @Test
    void aMissingProgramIsAFailedPrecondition() {
        DriverException e = assertThrows(DriverException.FailedPrecondition.class,
                () -> runner.run(Command.of(dir.resolve("no-such-program"), GENEROUS)));
        assertTrue(e.getMessage().contains("no-such-program"), e.getMessage());
    }

    @Test
    void locateFindsASystemProgramAsAnAbsolutePath() {
        Path sh = CommandRunner.locate("sh");
        assertTrue(sh.isAbsolute() && Files.isExecutable(sh), sh.toString());
    }

    @Test
    void locateRefusesAProgramThatIsNotInstalled() {
        assertThrows(DriverException.FailedPrecondition.class, () -> CommandRunner.locate("lvmqos-no-such-program"));
    }

    @Test
    void aDescendantHoldingTheOutputOpenDoesNotOutliveTheTimeout() throws Exception {
        Path pidFile = dir.resolve("pid");
        try {
            assertTimeoutPreemptively(Duration.ofSeconds(3), () -> {
                try {
                    runner.run(sh(Duration.ofSeconds(1), "/bin/sleep 10 & echo $! > " + pidFile + "; /bin/sleep 0.2"));
                } catch (DriverException.DeadlineExceeded acceptable) {
                    // a result or DeadlineExceeded are both fine, as long as it comes within the timeout
                }
            });
        } finally {
            ProcessHandle.of(pidIn(pidFile)).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    @Test
    void aChildPastItsTimeoutGetsSigtermAndTimeToExitBeforeAnySigkill() throws Exception {
        Path marker = dir.resolve("stopped");
        assertThrows(DriverException.DeadlineExceeded.class, () -> runner.run(sh(Duration.ofMillis(300),
                "trap 'echo cleaned up > " + marker + "; exit 0' TERM; while :; do /bin/sleep 0.05; done")
                .withStopGrace(GENEROUS)));
        assertEquals("cleaned up\n", Files.readString(marker));
    }

    @Test
    void aChildThatIgnoresSigtermIsKilledAfterItsGrace() throws Exception {
        Path pidFile = dir.resolve("pid");
        assertThrows(DriverException.DeadlineExceeded.class, () -> runner.run(sh(Duration.ofMillis(300),
                "trap '' TERM; echo $$ > " + pidFile + "; while :; do /bin/sleep 0.05; done")
                .withStopGrace(Duration.ofMillis(300))));
        assertTrue(goneWithin(pidIn(pidFile), Duration.ofSeconds(5)));
    }

    @Test
    void anInterruptedCallLetsTheChildFinishOnSigtermInsteadOfKillingIt() throws Exception {
        Path started = dir.resolve("started");
        Path marker = dir.resolve("finished");
        java.util.concurrent.atomic.AtomicReference<Throwable> outcome = new java.util.concurrent.atomic.AtomicReference<>();
        Thread caller = Thread.ofPlatform().start(() -> {
            try {
                runner.run(sh(GENEROUS, "trap '/bin/sleep 0.3; echo metadata written > " + marker + "; exit 0' TERM; "
                        + "echo $$ > " + started + "; while :; do /bin/sleep 0.05; done").withStopGrace(GENEROUS));
            } catch (Throwable t) {
                outcome.set(t);
            }
        });
        pidIn(started);
        caller.interrupt();
        caller.join(GENEROUS.toMillis() * 2);
        assertTrue(outcome.get() instanceof DriverException.Aborted, String.valueOf(outcome.get()));
        assertEquals("metadata written\n", Files.readString(marker));
    }

    @Test
    void aStreamedCommandHandsOverEveryLineInOrderAndItsExit() {
        List<String> lines = new java.util.ArrayList<>();
        CommandResult result = runner.runStreaming(sh(GENEROUS, "seq 1 100000; echo done >&2; exit 3"), lines::add);
        assertEquals(100000, lines.size());
        assertEquals("1", lines.getFirst());
        assertEquals("100000", lines.getLast());
        assertEquals(3, result.exitCode());
        assertTrue(result.stderr().contains("done"), result.stderr());
    }

    @Test
    void aConsumerThatGivesUpStopsTheStreamedCommand() {
        Set<Long> before = liveChildren();
        IllegalStateException stopped = assertThrows(IllegalStateException.class, () -> runner.runStreaming(
                sh(GENEROUS, "yes"), line -> {
                    throw new IllegalStateException("client gone");
                }));
        assertEquals("client gone", stopped.getMessage());
        assertEquals(before, liveChildren(), "no child left running");
    }

    @Test
    void aStreamedCommandPastItsTimeoutIsStopped() {
        assertTimeoutPreemptively(GENEROUS, () -> assertThrows(DriverException.DeadlineExceeded.class,
                () -> runner.runStreaming(sh(Duration.ofMillis(300), "echo first; sleep 30"), line -> { })));
    }
}
