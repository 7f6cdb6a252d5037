package io.lvmqos.e2e.uml;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.lvmqos.e2e.uml.UmlGuestException.Failure;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * How a guest run ended, from init's stage markers on the console and the files in out/: a
 * {@link GuestRun} if the payload ran to its exit code, else a {@link UmlGuestException} saying which
 * part failed. The same for both kinds of guest, whose init is the same script.
 */
public final class GuestVerdict {
    private GuestVerdict() {
    }

    /**
     * What the host saw of one guest's run.
     *
     * @param runDir the run's directory (console.log, out/)
     * @param console what the guest printed itself (no dump the host asked for after the timeout)
     * @param exited whether the guest's process ended by itself within the timeout
     * @param exitValue its exit code, when it exited
     * @param wallTime from its start to its end, on the host
     * @param timeout the run's limit
     */
    public record Ending(Path runDir, List<String> console, boolean exited, int exitValue, Duration wallTime,
            Duration timeout) {
    }

    /**
     * The run's result, or the failure that explains it.
     *
     * @param program the guest's program for messages: linux.uml or qemu-system-x86_64
     * @param bootAdvice what to do when the guest never reached init
     */
    public static GuestRun of(Ending ending, String program, String bootAdvice) {
        Path runDir = ending.runDir();
        StageLog stages = StageLog.parse(ending.console());
        String consoleText = String.join("\n", ending.console());
        Path outDir = GuestRunDir.outDir(runDir);
        Optional<Integer> exitCode = readExitCode(outDir);

        Optional<StageLog.Marker> failed = stages.failure();
        if (failed.isPresent()) {
            throw failure(failureOf(failed.get().stage()), "stage " + failed.get().stage() + ": " + failed.get().detail(),
                    runDir, consoleText);
        }
        // A guest we had to kill after its payload ended (a slow halt) still has a result to report.
        if (exitCode.isPresent() && stages.find(StageLog.PAYLOAD, "exit").isPresent()) {
            Duration bootToPayload = stages.find(StageLog.PAYLOAD, "start")
                    .flatMap(StageLog.Marker::uptime).orElse(Duration.ZERO);
            Duration payloadEnd = stages.find(StageLog.PAYLOAD, "exit")
                    .flatMap(StageLog.Marker::uptime).orElse(bootToPayload);
            return new GuestRun(exitCode.get(), consoleText, readPayloadLog(outDir), outDir, runDir,
                    ending.wallTime(), bootToPayload, payloadEnd.minus(bootToPayload));
        }
        if (!stages.reached(StageLog.INIT)) {
            throw failure(Failure.BOOT, (ending.exited()
                    ? program + " exited with code " + ending.exitValue() + " before init ran"
                    : "init did not start within " + ending.timeout())
                    + "; " + bootAdvice, runDir, consoleText);
        }
        String stage = stages.lastStarted().orElse(StageLog.INIT);
        if (!ending.exited() && stage.equals(StageLog.PAYLOAD)) {
            throw failure(Failure.PAYLOAD_TIMEOUT, "payload still running after " + ending.timeout() + "; guest killed",
                    runDir, consoleText);
        }
        if (!ending.exited()) {
            throw failure(failureOf(stage), "stage " + stage + " still running after " + ending.timeout() + "; guest killed",
                    runDir, consoleText);
        }
        throw failure(Failure.GUEST_CRASHED,
                program + " exited with code " + ending.exitValue() + " during stage " + stage, runDir, consoleText);
    }

    private static Failure failureOf(String stage) {
        return switch (stage) {
            case "modules" -> Failure.MODULES;
            case "vg" -> Failure.VOLUME_GROUP;
            case "cgroup" -> Failure.CGROUP;
            case StageLog.PAYLOAD -> Failure.GUEST_CRASHED;
            default -> Failure.SETUP;
        };
    }

    private static UmlGuestException failure(Failure failure, String detail, Path runDir, String console) {
        return new UmlGuestException(failure, detail, Optional.of(runDir), UmlGuest.tail(console, UmlGuest.CONSOLE_TAIL_LINES));
    }

    private static Optional<Integer> readExitCode(Path outDir) {
        Path file = outDir.resolve("exit-code");
        try {
            return Files.exists(file) ? Optional.of(Integer.parseInt(Files.readString(file).trim())) : Optional.empty();
        } catch (IOException | NumberFormatException e) {
            return Optional.empty();
        }
    }

    private static String readPayloadLog(Path outDir) {
        try {
            Path log = outDir.resolve("payload.log");
            // Leniently: a payload may print bytes that are not UTF-8.
            return Files.exists(log) ? new String(Files.readAllBytes(log), UTF_8) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
