package io.lvmqos.lvm;

import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.Command;
import io.lvmqos.exec.CommandResult;
import io.lvmqos.exec.CommandRunner;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One long-lived {@code lvm} in its shell mode, fed one command line at a time on stdin: the
 * process start, the configuration parse and the library set-up are paid once instead of per
 * command. lvm is started with a configuration ({@link LvmShellConfig}) that sends each command's
 * report, its command log included, to stdout as one JSON object, so every command, successful or
 * not, ends with a report whose last log line is the shell's status for it; that line gives the
 * exit code a forked lvm would have had, and the log's error and warning lines its stderr. The
 * result is a {@link CommandResult} like a fork's, so {@link LvmFailure} reads both the same way.
 *
 * <p>A command that overstays its timeout, or whose thread is interrupted, ends the shell the way
 * {@link CommandRunner} ends a fork (SIGTERM, which lvm defers until it holds no lock, then
 * SIGKILL after the command's stop grace); the shell is then unusable and its owner starts another.
 * Not thread-safe: {@link LvmShells} hands each shell to one caller at a time.
 */
final class LvmShell implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LvmShell.class);

    /** Every argument the driver passes, as lvm's shell splits a line: no quotes, spaces or escapes. */
    private static final Pattern PLAIN_ARGUMENT = Pattern.compile("[A-Za-z0-9_+.,:/=@%-]+");
    /** A report's first and last line; lvm indents the JSON object by two spaces. */
    private static final String REPORT_START = "  {";
    private static final String REPORT_END = "  }";
    /** ECMD_PROCESSED, lvm's internal "success", which a forked lvm turns into exit status 0. */
    private static final int COMMAND_PROCESSED = 1;
    private static final String END_OF_OUTPUT = new String("end of output");

    private final Process process;
    private final Command identity;
    private final CommandRunner runner;
    private final Writer input;
    private final BlockingQueue<String> output = new LinkedBlockingQueue<>();
    private long idleSince = System.nanoTime();
    private boolean broken;

    private LvmShell(Process process, Command identity, CommandRunner runner) {
        this.process = process;
        this.identity = identity;
        this.runner = runner;
        this.input = process.outputWriter(StandardCharsets.UTF_8);
        Thread.ofVirtual().name("lvm-shell-" + process.pid()).start(this::readOutput);
    }

    /** Starts lvm in its shell mode with the configuration in {@code systemDir}. */
    static LvmShell start(CommandRunner runner, Path lvm, Path systemDir, Duration stopGrace) {
        Command identity = new Command(lvm, List.of(), Duration.ofDays(1), stopGrace);
        Process process = runner.startLongLived(identity, Map.of("LVM_SYSTEM_DIR", systemDir.toString(),
                "LVM_REPORT_FD", "1", "LVM_SUPPRESS_FD_WARNINGS", "1"));
        log.debug("started lvm shell {} with configuration {}", process.pid(), systemDir);
        return new LvmShell(process, identity, runner);
    }

    /**
     * Whether the shell can run {@code command} as it is: lvm's own verb and plain arguments, and
     * no thin pool component named. lvm's shell keeps a component activation's mode for the
     * commands after it: once {@code lvchange -ay vg/pool_tmeta} has run, even refused, the next
     * {@code lvchange --addtag} fails with "Cannot change LV properties when activating component
     * LVs." and the shell's status still says it succeeded (lvm 2.03.16, seen in the guest).
     */
    static boolean canRun(Command command) {
        return !command.arguments().isEmpty()
                && command.arguments().stream().allMatch(a -> PLAIN_ARGUMENT.matcher(a).matches())
                && command.arguments().stream().noneMatch(a -> a.endsWith("_tmeta") || a.endsWith("_tdata"));
    }

    /** Whether this shell may take another command: alive, and nothing left it half way. */
    boolean usable() {
        return !broken && process.isAlive();
    }

    long idleNanos() {
        return System.nanoTime() - idleSince;
    }

    long pid() {
        return process.pid();
    }

    /**
     * Runs one command. Empty when the shell could not be given it (it had ended: nothing ran, a
     * fresh shell may run it); otherwise the result a forked lvm would have returned.
     */
    Optional<CommandResult> run(Command command) {
        Duration timeout = runner.callDeadline().bound(command.timeout());
        long started = System.nanoTime();
        long until = started + timeout.toNanos();
        output.clear();
        try {
            input.write(String.join(" ", command.arguments()) + "\n");
            input.flush();
        } catch (IOException e) {
            broken = true;
            return Optional.empty();
        }
        List<String> stray = new ArrayList<>();
        List<String> report = new ArrayList<>();
        try {
            while (true) {
                String line = output.poll(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (line == null) {
                    broken = true;
                    CommandRunner.stop(process, command);
                    throw DriverException.deadlineExceeded(command.display() + " did not finish within "
                            + timeout.toMillis() + " ms in lvm's shell, which was stopped");
                }
                if (line == END_OF_OUTPUT) {
                    broken = true;
                    stray.add("lvm's shell " + process.pid() + " ended during the command");
                    return Optional.of(new CommandResult(command, exitAfterEnd(), "", String.join("\n", stray)));
                }
                if (report.isEmpty() && !line.equals(REPORT_START)) {
                    stray.add(line); // lvm's words outside its log report: getopt's, and a few of its set-up
                    continue;
                }
                report.add(line);
                if (line.equals(REPORT_END)) {
                    break;
                }
            }
        } catch (InterruptedException e) {
            broken = true;
            CommandRunner.stop(process, command);
            Thread.currentThread().interrupt();
            throw DriverException.aborted(command.display() + " was stopped because the driver is shutting down");
        }
        idleSince = System.nanoTime();
        CommandResult result = result(command, String.join("\n", report), stray);
        if (log.isDebugEnabled()) {
            log.debug("{} exited {} in {} ms (lvm shell {})", command.display(), result.exitCode(),
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started), process.pid());
        }
        return Optional.of(result);
    }

    /**
     * The command's report as a fork's result: the report itself as stdout; as stderr what lvm
     * said outside the report and the log's errors and warnings; the exit code from the shell's
     * status line for the command.
     */
    static CommandResult result(Command command, String reportJson, List<String> stray) {
        List<String> said = new ArrayList<>(stray);
        Integer returnCode = null;
        Object parsed = ReportJson.parse(reportJson);
        if (parsed instanceof Map<?, ?> object && object.get("log") instanceof List<?> entries) {
            for (Object entry : entries) {
                if (!(entry instanceof Map<?, ?> line)) {
                    continue;
                }
                String type = String.valueOf(line.get("log_type"));
                if (type.equals("error") || type.equals("warn")) {
                    said.add(String.valueOf(line.get("log_message")));
                } else if (type.equals("status") && "shell".equals(line.get("log_context"))
                        && "cmd".equals(line.get("log_object_type"))) {
                    returnCode = Integer.valueOf(String.valueOf(line.get("log_ret_code")));
                }
            }
        }
        if (returnCode == null) {
            said.add("lvm's shell gave no status for the command");
            return new CommandResult(command, -1, reportJson, String.join("\n", said));
        }
        int exit = returnCode == COMMAND_PROCESSED ? 0 : returnCode;
        return new CommandResult(command, exit, reportJson, String.join("\n", said));
    }

    private int exitAfterEnd() {
        try {
            return process.waitFor(1, TimeUnit.SECONDS) ? process.exitValue() : -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    private void readOutput() {
        try (BufferedReader reader = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                output.add(line);
            }
        } catch (IOException e) {
            log.debug("reading lvm shell {} failed: {}", process.pid(), e.getMessage());
        } finally {
            output.add(END_OF_OUTPUT);
        }
    }

    /**
     * Ends the shell between commands: end of input, at which lvm exits by itself; a shell that
     * does not within the stop grace is stopped like a fork.
     */
    @Override
    public void close() {
        broken = true;
        try {
            input.close();
        } catch (IOException e) {
            // already gone
        }
        try {
            if (!process.waitFor(identity.stopGrace().toMillis(), TimeUnit.MILLISECONDS)) {
                CommandRunner.stop(process, identity);
            }
        } catch (InterruptedException e) {
            CommandRunner.stop(process, identity);
            Thread.currentThread().interrupt();
        }
    }
}
