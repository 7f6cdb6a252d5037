package io.lvmqos.exec;

import io.grpc.Context;
import io.grpc.Deadline;
import io.lvmqos.errors.DriverException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs external programs: argument arrays, {@code LC_ALL=C} so that messages are parseable, both
 * streams drained concurrently so a chatty child cannot block on a full pipe, and a timeout that
 * never outlives the caller's gRPC deadline. A child that passes its timeout is killed with its
 * descendants.
 */
public final class CommandRunner {

    private static final Logger log = LoggerFactory.getLogger(CommandRunner.class);
    private static final List<Path> SEARCH_PATH =
            List.of(Path.of("/usr/sbin"), Path.of("/sbin"), Path.of("/usr/bin"), Path.of("/bin"));

    /** How long the output of a command that has exited may take to drain, even at its deadline. */
    private static final Duration OUTPUT_GRACE = Duration.ofSeconds(1);

    private final Map<String, String> environment;

    public CommandRunner(Map<String, String> extraEnvironment) {
        this.environment = Map.copyOf(extraEnvironment);
    }

    public CommandRunner() {
        this(Map.of());
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

    /** Runs the command and returns whatever it exited with. */
    public CommandResult run(Command command) {
        Duration timeout = effectiveTimeout(command.timeout());
        ProcessBuilder builder = new ProcessBuilder(command.argv());
        builder.environment().put("LC_ALL", "C");
        builder.environment().putAll(environment);
        builder.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        long started = System.nanoTime();
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            throw DriverException.failedPrecondition("cannot run " + command.program() + ": " + e.getMessage());
        }
        CompletableFuture<String> stdout = drain(process.getInputStream());
        CompletableFuture<String> stderr = drain(process.getErrorStream());
        try {
            if (!process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
                kill(process);
                throw DriverException.deadlineExceeded(
                        command.display() + " did not finish within " + timeout.toMillis() + " ms and was killed");
            }
            // a background child of the command may still hold the pipes open: bound that wait too,
            // but give the pipes a moment to drain for a command that exited just before its timeout
            long drainUntil = Math.max(started + timeout.toNanos(), System.nanoTime() + OUTPUT_GRACE.toNanos());
            CommandResult result;
            try {
                String out = stdout.get(drainUntil - System.nanoTime(), TimeUnit.NANOSECONDS);
                String err = stderr.get(drainUntil - System.nanoTime(), TimeUnit.NANOSECONDS);
                result = new CommandResult(command, process.exitValue(), out, err);
            } catch (java.util.concurrent.TimeoutException e) {
                throw DriverException.deadlineExceeded(command.display() + " exited, but a process it started kept its "
                        + "output open past the " + timeout.toMillis() + " ms timeout");
            }
            if (log.isDebugEnabled()) {
                log.debug("{} exited {} in {} ms", command.display(), result.exitCode(),
                        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
            }
            return result;
        } catch (InterruptedException e) {
            kill(process);
            Thread.currentThread().interrupt();
            throw DriverException.aborted(command.display() + " was interrupted");
        } catch (ExecutionException e) {
            throw DriverException.internal("reading the output of " + command.display() + " failed", e.getCause());
        }
    }

    /** Runs the command and fails with its own stderr when it exits non-zero. */
    public CommandResult runChecked(Command command) {
        CommandResult result = run(command);
        if (!result.succeeded()) {
            throw DriverException.internal(command.display() + " failed (exit " + result.exitCode() + "): "
                    + result.diagnostic());
        }
        return result;
    }

    private static Duration effectiveTimeout(Duration requested) {
        Deadline deadline = Context.current().getDeadline();
        if (deadline == null) {
            return requested;
        }
        long remaining = deadline.timeRemaining(TimeUnit.NANOSECONDS);
        if (remaining <= 0) {
            throw DriverException.deadlineExceeded("the caller's deadline has already passed");
        }
        return requested.toNanos() < remaining ? requested : Duration.ofNanos(remaining);
    }

    private static void kill(Process process) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try {
            process.waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
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
