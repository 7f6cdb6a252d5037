package io.lvmqos.e2e.uml;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A guest run whose payload ran to its end.
 *
 * @param exitCode the payload's exit code
 * @param console everything the guest printed on its console: kernel, init's stage markers, payload
 * @param payloadLog the payload's standard output and error
 * @param outDir the run's output directory (same path in the guest), holding payload.log, exit-code
 *     and whatever the payload wrote there
 * @param runDir the run's directory on the host (console.log, params.sh, out/, disk images)
 * @param wallTime from starting linux.uml to its end, measured on the host
 * @param bootToPayload the guest's uptime when the payload started: boot plus init's setup
 * @param payloadTime how long the payload ran, on the guest's clock
 */
public record GuestRun(
        int exitCode,
        String console,
        String payloadLog,
        Path outDir,
        Path runDir,
        Duration wallTime,
        Duration bootToPayload,
        Duration payloadTime) {

    private static final Pattern KERNEL = Pattern.compile("LVMQOS-STAGE init start kernel=(\\S+)");

    /** Returns this run if the payload exited 0; otherwise throws a {@code PAYLOAD_FAILED} failure. */
    public GuestRun requireSuccess() {
        if (exitCode != 0) {
            throw new UmlGuestException(UmlGuestException.Failure.PAYLOAD_FAILED,
                    "exit code " + exitCode, Optional.of(runDir), consoleTail(UmlGuest.CONSOLE_TAIL_LINES));
        }
        return this;
    }

    /** The guest kernel's release ({@code uname -r}), as init announced it on the console. */
    public Optional<String> kernelRelease() {
        Matcher matcher = KERNEL.matcher(console);
        return matcher.find() ? Optional.of(matcher.group(1)) : Optional.empty();
    }

    public String consoleTail(int lines) {
        return UmlGuest.tail(console, lines);
    }

    /** One line with the timings, for a test's log. */
    public String timings() {
        return "boot to payload %.2f s, payload %.2f s, wall %.2f s".formatted(
                bootToPayload.toMillis() / 1000.0, payloadTime.toMillis() / 1000.0, wallTime.toMillis() / 1000.0);
    }
}
