package io.lvmqos.e2e.guest;

import io.lvmqos.e2e.uml.GuestEnv;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * A kubernetes-csi program (node-driver-registrar, livenessprobe) running in the guest beside the
 * driver, as its container would run it: its own process, the given arguments, its output (klog
 * writes to standard error) in a file of the run's out dir.
 *
 * @param name the program's file name
 * @param logFile its output
 */
record SidecarProcess(String name, Process process, Path logFile) implements AutoCloseable {

    private static final AtomicInteger STARTED = new AtomicInteger();

    static SidecarProcess start(Path binary, List<String> args) throws IOException {
        String name = binary.getFileName().toString();
        Path logFile = GuestEnv.outDir().resolve(name + "-" + STARTED.incrementAndGet() + ".log");
        List<String> command = new ArrayList<>();
        command.add(binary.toString());
        command.addAll(args);
        Files.writeString(logFile, String.join(" ", command) + "\n");
        Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile())).start();
        return new SidecarProcess(name, process, logFile);
    }

    String log() throws IOException {
        return Files.readString(logFile);
    }

    boolean alive() {
        return process.isAlive();
    }

    /**
     * Polls until {@code condition} holds. Fails when the program exits first (a deployed argument it
     * does not accept ends it at once, with exit code 2) or when {@code timeout} passes.
     */
    void await(String what, BooleanSupplier condition, Duration timeout) throws IOException, InterruptedException {
        await(() -> what, condition, timeout);
    }

    /** As {@link #await(String, BooleanSupplier, Duration)}, the awaited thing described when the wait fails. */
    void await(Supplier<String> what, BooleanSupplier condition, Duration timeout)
            throws IOException, InterruptedException {
        if (!awaitOrExit(what, condition, timeout)) {
            throw new AssertionError(name + " exited " + process.exitValue() + " before " + what.get()
                    + "; its output (" + logFile + "):\n" + log());
        }
    }

    /**
     * Polls until {@code condition} holds (true) or the program has exited (false); fails when
     * {@code timeout} passes first.
     */
    boolean awaitOrExit(Supplier<String> what, BooleanSupplier condition, Duration timeout)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (!process.isAlive()) {
                return false;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no " + what.get() + " within " + timeout + "; " + name + "'s output ("
                        + logFile + "):\n" + log());
            }
            TimeUnit.MILLISECONDS.sleep(200);
        }
        return true;
    }

    /** The exit code of a program that ends by itself; fails if it still runs after {@code timeout}. */
    int awaitExit(Duration timeout) throws IOException, InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError(name + " still runs " + timeout + " later; its output:\n" + log());
        }
        return process.exitValue();
    }

    /** SIGTERM, as kubelet stops a container, then SIGKILL after a grace. */
    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
        }
    }
}
