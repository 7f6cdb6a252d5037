package io.lvmqos.exec;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One external program invocation: an absolute program path and its arguments, never a shell
 * line. The timeout is an upper bound; the runner shortens it to the caller's RPC deadline.
 */
public record Command(Path program, List<String> arguments, Duration timeout) {

    public Command {
        Objects.requireNonNull(program, "program");
        if (!program.isAbsolute()) {
            throw new IllegalArgumentException("program must be an absolute path: " + program);
        }
        arguments = List.copyOf(arguments);
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive: " + timeout);
        }
    }

    public static Command of(Path program, Duration timeout, String... arguments) {
        return new Command(program, List.of(arguments), timeout);
    }

    public static Command of(Path program, Duration timeout, List<String> arguments) {
        return new Command(program, arguments, timeout);
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
