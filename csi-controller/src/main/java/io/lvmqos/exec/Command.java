package io.lvmqos.exec;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One external program invocation: an absolute program path and its arguments, never a shell
 * line. The timeout is an upper bound; the runner shortens it to the caller's RPC deadline.
 * {@code stopGrace} is how long a child that must be stopped (its timeout passed, or the driver
 * is shutting down) has between SIGTERM and SIGKILL.
 */
public record Command(Path program, List<String> arguments, Duration timeout, Duration stopGrace) {

    /** Enough for a program without state of its own (blkid, mkfs, lvs) to end on SIGTERM. */
    public static final Duration DEFAULT_STOP_GRACE = Duration.ofSeconds(2);

    public Command {
        Objects.requireNonNull(program, "program");
        if (!program.isAbsolute()) {
            throw new IllegalArgumentException("program must be an absolute path: " + program);
        }
        arguments = List.copyOf(arguments);
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive: " + timeout);
        }
        if (stopGrace.isNegative()) {
            throw new IllegalArgumentException("stopGrace must not be negative: " + stopGrace);
        }
    }

    public static Command of(Path program, Duration timeout, String... arguments) {
        return new Command(program, List.of(arguments), timeout, DEFAULT_STOP_GRACE);
    }

    public static Command of(Path program, Duration timeout, List<String> arguments) {
        return new Command(program, arguments, timeout, DEFAULT_STOP_GRACE);
    }

    /** The same command, given {@code grace} between SIGTERM and SIGKILL when it must be stopped. */
    public Command withStopGrace(Duration grace) {
        return new Command(program, arguments, timeout, grace);
    }

    public List<String> argv() {
        List<String> argv = new ArrayList<>(arguments.size() + 1);
        argv.add(program.toString());
        argv.addAll(arguments);
        return argv;
    }

    /** The command as a person would type it, for messages and logs. */
    public String display() {
        return String.join(" ", argv());
    }
}
