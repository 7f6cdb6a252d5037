package io.lvmqos.exec;

import io.lvmqos.errors.DriverException;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs external programs: argument arrays, {@code LC_ALL=C} so that messages are parseable, both
 * streams drained concurrently so a chatty child cannot block on a full pipe, and a timeout that
 * never outlives the {@link Deadline} the caller gives, or, where it gives none, the deadline of the
 * call in progress as the supplier the runner was made with reads it (the service layer's, which
 * knows the RPC; this package knows no RPC type).
 *
 * <p>A child that must be stopped, because its timeout passed or because the thread waiting for
 * it was interrupted (the driver shutting down), first gets SIGTERM and {@link Command#stopGrace()}
 * to exit; only then are it and its descendants SIGKILLed. lvm blocks catchable signals from just
 * before it takes a volume group's lock until it has released it (and while it has devices
 * suspended), so SIGTERM lets a metadata change in progress complete and ends lvm at its next
 * safe point, where SIGKILL could leave a thin pool's devices suspended. The calling thread waits
 * through the grace, so a call's per-volume lock is never released while its lvm still runs.
 */
public final class CommandRunner {

    private static final Logger log = LoggerFactory.getLogger(CommandRunner.class);
    private static final List<Path> SEARCH_PATH =
            List.of(Path.of("/usr/sbin"), Path.of("/sbin"), Path.of("/usr/bin"), Path.of("/bin"));

    /** How long the output of a command that has exited may take to drain, even at its deadline. */
    private static final Duration OUTPUT_GRACE = Duration.ofSeconds(1);

    private final Map<String, String> environment;
    private final Supplier<Deadline> callDeadline;

    /** {@code callDeadline} gives the deadline of the call the current thread serves, {@link Deadline#NONE} outside one. */
    public CommandRunner(Map<String, String> extraEnvironment, Supplier<Deadline> callDeadline) {
        this.environment = Map.copyOf(extraEnvironment);
        this.callDeadline = callDeadline;
    }

    /** A runner for work that no call started (tools, tests): commands keep their own timeouts. */
    public CommandRunner() {
        this(Map.of(), () -> Deadline.NONE);
    }

    /** The deadline of the call the current thread serves, for waits before a command (locks, turns). */
    public Deadline callDeadline() {
        return callDeadline.get();
    }

    /** Finds a system program in the sbin and bin directories, as an absolute path. */
    public static Path locate(String name) {
        return findProgram(name)
                .orElseThrow(() -> DriverException.failedPrecondition(
                        "program " + name + " not found in " + SEARCH_PATH + ": is it installed on the node?"));
    }

    public static Optional<Path> findProgram(String name) {
        return SEARCH_PATH.stream().map(dir -> dir.resolve(name)).filter(Files::isExecutable).findFirst();
    }

    /** Runs the command within the current call's deadline and returns whatever it exited with. */
    public CommandResult run(Command command) {
        return run(command, callDeadline());
    }

    /** Runs the command within {@code deadline} and returns whatever it exited with. */
    public CommandResult run(Command command, Deadline deadline) {
        Duration timeout = deadline.bound(command.timeout());
        long started = System.nanoTime();
        Process process = start(command);
        CompletableFuture<String> stdout = drain(process.getInputStream());
        CompletableFuture<String> stderr = drain(process.getErrorStream());
        boolean finished;
        try {
            finished = process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            // shutting down: lvm finishes what it is doing (SIGTERM waits for that), within the grace
            stop(process, command);
            Thread.currentThread().interrupt();
            throw DriverException.aborted(command.display() + " was stopped because the driver is shutting down");
        }
        if (!finished) {
            stop(process, command);
            throw DriverException.deadlineExceeded(
                    command.display() + " did not finish within " + timeout.toMillis() + " ms and was stopped");
        }
        // a background child of the command may still hold the pipes open: bound that wait too,
        // but give the pipes a moment to drain for a command that exited just before its timeout
        long drainUntil = Math.max(started + timeout.toNanos(), System.nanoTime() + OUTPUT_GRACE.toNanos());
        CommandResult result;
        try {
            String out = stdout.get(drainUntil - System.nanoTime(), TimeUnit.NANOSECONDS);
            String err = stderr.get(drainUntil - System.nanoTime(), TimeUnit.NANOSECONDS);
            result = new CommandResult(command, process.exitValue(), out, err);
        } catch (TimeoutException e) {
            throw DriverException.deadlineExceeded(command.display() + " exited, but a process it started kept its "
                    + "output open past the " + timeout.toMillis() + " ms timeout");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw DriverException.aborted(command.display() + " exited, but reading its output was interrupted");
        } catch (ExecutionException e) {
            throw DriverException.internal("reading the output of " + command.display() + " failed", e.getCause());
        }
        if (log.isDebugEnabled()) {
            log.debug("{} exited {} in {} ms", command.display(), result.exitCode(),
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
        }
        return result;
    }

    /**
     * Runs a command whose output is too large to hold: each line of stdout goes to {@code lines}
     * on the calling thread as it is read, so the pace is the consumer's. The timeout (within the
     * current call's deadline) stops the child as {@link #run} does; so does an exception from the
     * consumer (a client that went away), which is rethrown. The result has an empty stdout.
     */
    public CommandResult runStreaming(Command command, Consumer<String> lines) {
        Duration timeout = callDeadline().bound(command.timeout());
        Process process = start(command);
        CompletableFuture<String> stderr = drain(process.getErrorStream());
        AtomicBoolean timedOut = new AtomicBoolean();
        Thread watchdog = Thread.ofVirtual().start(() -> {
            try {
                if (!process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
                    timedOut.set(true);
                    stop(process, command);
                }
            } catch (InterruptedException e) {
                // the reader finished first
            }
        });
        try (BufferedReader reader = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                lines.accept(line);
            }
        } catch (IOException e) {
            stop(process, command);
            throw DriverException.internal("reading the output of " + command.display() + " failed", e);
        } catch (RuntimeException e) {
            stop(process, command);
            throw e;
        } finally {
            watchdog.interrupt();
        }
        if (!waitUninterruptibly(process, OUTPUT_GRACE) || timedOut.get()) {
            stop(process, command);
            throw DriverException.deadlineExceeded(
                    command.display() + " did not finish within " + timeout.toMillis() + " ms and was stopped");
        }
        String err;
        try {
            err = stderr.get(OUTPUT_GRACE.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException | ExecutionException e) {
            err = "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw DriverException.aborted(command.display() + " exited, but reading its errors was interrupted");
        }
        return new CommandResult(command, process.exitValue(), "", err);
    }

    /**
     * Starts a program that lives across many requests (lvm's shell): the runner's environment plus
     * {@code extraEnvironment}, stdin a pipe the caller writes, stderr merged into stdout so that
     * what the program says arrives in the order it said it. The caller owns the process and ends
     * it with {@link #stop}.
     */
    public Process startLongLived(Command command, Map<String, String> extraEnvironment) {
        ProcessBuilder builder = new ProcessBuilder(command.argv()).redirectErrorStream(true);
        builder.environment().put("LC_ALL", "C");
        builder.environment().putAll(environment);
        builder.environment().putAll(extraEnvironment);
        try {
            return ProcessStarts.start(builder);
        } catch (IOException e) {
            throw DriverException.failedPrecondition("cannot run " + command.program() + ": " + e.getMessage());
        }
    }

    /** A runner whose children also get {@code more} in their environment (over this one's). */
    public CommandRunner withEnvironment(Map<String, String> more) {
        Map<String, String> merged = new HashMap<>(environment);
        merged.putAll(more);
        return new CommandRunner(merged, callDeadline);
    }

    /** The value the runner's children see for an environment variable. */
    public Optional<String> environmentValue(String name) {
        return Optional.ofNullable(environment.get(name)).or(() -> Optional.ofNullable(System.getenv(name)));
    }

    private Process start(Command command) {
        ProcessBuilder builder = new ProcessBuilder(command.argv());
        builder.environment().put("LC_ALL", "C");
        builder.environment().putAll(environment);
        builder.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        try {
            return ProcessStarts.start(builder);
        } catch (IOException e) {
            throw DriverException.failedPrecondition("cannot run " + command.program() + ": " + e.getMessage());
        }
    }

    /**
     * SIGTERM to the child, up to its stop grace to exit, then SIGKILL to whatever of it and its
     * descendants is left. Descendants are listed first: once the child exits they are orphans and
     * no longer found as its descendants. The wait is not cut short by an interrupt.
     */
    public static void stop(Process process, Command command) {
        List<ProcessHandle> family = process.descendants().toList();
        process.destroy();
        boolean exited = waitUninterruptibly(process, command.stopGrace());
        if (!exited) {
            log.warn("{} did not exit within {} ms of SIGTERM; sending SIGKILL", command.display(),
                    command.stopGrace().toMillis());
        }
        family.forEach(ProcessHandle::destroyForcibly);
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        if (!exited) {
            process.destroyForcibly();
            waitUninterruptibly(process, Duration.ofSeconds(5));
        }
    }

    private static boolean waitUninterruptibly(Process process, Duration limit) {
        long until = System.nanoTime() + limit.toNanos();
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return process.waitFor(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static CompletableFuture<String> drain(InputStream stream) {
        CompletableFuture<String> text = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try (stream) {
                ByteArrayOutputStream buffer = new ByteArrayOutputStream();
                stream.transferTo(buffer);
                text.complete(buffer.toString(StandardCharsets.UTF_8));
            } catch (IOException e) {
                text.completeExceptionally(new UncheckedIOException(e));
            }
        });
        return text;
    }
}
