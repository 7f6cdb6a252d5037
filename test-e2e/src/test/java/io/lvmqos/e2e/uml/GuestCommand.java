package io.lvmqos.e2e.uml;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Runs a real command (an argument list, no shell) for a guest-side check, with {@code LC_ALL=C}
 * and a timeout, and keeps what it printed for the assertion message.
 */
public final class GuestCommand {
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(2);

    private GuestCommand() {
    }

    /** What a command did. */
    public record Result(List<String> argv, int exitCode, String stdout, String stderr) {
        public boolean succeeded() {
            return exitCode == 0;
        }

        /** Returns this result if the command exited 0, else fails the test with its output. */
        public Result requireSuccess() {
            if (!succeeded()) {
                throw new AssertionError(this.toString());
            }
            return this;
        }

        @Override
        public String toString() {
            return String.join(" ", argv) + " exited " + exitCode
                    + "\n--- stdout ---\n" + stdout + "\n--- stderr ---\n" + stderr;
        }
    }

    /** Runs the command and returns its result, whatever its exit code. */
    public static Result run(String... argv) {
        return run(DEFAULT_TIMEOUT, List.of(argv));
    }

    /** Runs the command and returns its standard output, or fails the test if it exits non-zero. */
    public static String ok(String... argv) {
        return run(argv).requireSuccess().stdout();
    }

    public static Result run(Duration timeout, List<String> argv) {
        ProcessBuilder builder = new ProcessBuilder(argv);
        builder.environment().put("LC_ALL", "C");
        Process process;
        try {
            process = builder.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + argv, e);
        }
        // Both streams drained concurrently: a command that fills one pipe while we read the other
        // would otherwise block forever.
        CompletableFuture<String> stdout = drain(process.getInputStream());
        CompletableFuture<String> stderr = drain(process.getErrorStream());
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                throw new AssertionError(String.join(" ", argv) + " did not finish within " + timeout);
            }
            return new Result(List.copyOf(argv), process.exitValue(), stdout.get(), stderr.get());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            throw new IllegalStateException("interrupted while running " + argv, e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("cannot read the output of " + argv, e.getCause());
        }
    }

    private static CompletableFuture<String> drain(InputStream stream) {
        CompletableFuture<String> text = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try (stream) {
                text.complete(new String(stream.readAllBytes(), UTF_8));
            } catch (IOException e) {
                text.completeExceptionally(e);
            }
        });
        return text;
    }
}
