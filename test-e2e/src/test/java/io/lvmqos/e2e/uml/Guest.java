package io.lvmqos.e2e.uml;

import io.lvmqos.e2e.uml.UmlGuestException.Failure;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Assumptions;

/**
 * What both kinds of guest ({@link UmlGuest}, {@code QemuGuest}) do alike: the host's checks before
 * a boot, the run directory with init's common parameters, the run from boot to verdict, the task
 * dump of a guest that outran its timeout, and the disks deleted after a run that passed. Each kind
 * gives its command line, its kernel's checks and parameters, and how it asks its kernel for the
 * dump; the settings are the ones {@link GuestBuilder} checked.
 */
public abstract class Guest {

    /**
     * The constants that tell the kinds apart where they otherwise do the same.
     *
     * @param name the kind, as {@link GuestProcess} names its threads
     * @param skipVariable set to 1, it skips (not passes) every test of this kind
     * @param tests what a skip says it skipped
     * @param whyRoot why a host user other than root cannot run this kind
     * @param moduleLoader the tool init loads the kernel's modules with
     * @param devicePrefix the guest's disk n is this followed by the n-th letter
     * @param signatureKey the command line's word naming init, which is unique to one run
     * @param echoProperty the system property that copies the console to standard output
     */
    public record Kind(String name, String skipVariable, String tests, String whyRoot, String moduleLoader,
            String devicePrefix, String signatureKey, String echoProperty) {

        /** Unique to the host processes of the run in {@code runDir}, whose command line holds it. */
        public String signature(Path runDir) {
            return signatureKey + GuestRunDir.init(runDir);
        }
    }

    /** Something that runs beside the guest until it ends, such as a server of the guest's requests. */
    protected interface Alongside extends AutoCloseable {
        @Override
        void close();
    }

    protected final GuestBuilder.Settings settings;
    private final Kind kind;

    protected Guest(Kind kind, GuestBuilder.Settings settings) {
        this.kind = kind;
        this.settings = settings;
    }

    /**
     * Boots the guest, runs the payload, and returns once the guest has ended and every host process
     * of it is gone.
     *
     * @throws UmlGuestException if the guest did not get as far as the payload's exit code, or the
     *     payload outran the timeout
     */
    public final GuestRun run() {
        Path runDir = prepareRun();
        long started = System.nanoTime();
        GuestProcess guest = start(runDir);
        boolean exited;
        int linesBeforeDump = -1;
        try {
            try (Alongside alongside = alongside(runDir, guest)) {
                exited = guest.awaitExit(settings.timeout());
            }
            if (!exited) {
                linesBeforeDump = guest.console().size();
                dumpGuestTasks(runDir, guest);
            }
        } finally {
            guest.close(); // kills a guest that outran the timeout, and any straggler of one that did not
        }
        int exitValue = exited ? guest.exitValue() : -1;
        List<String> console = guest.console();
        Duration wallTime = Duration.ofNanos(System.nanoTime() - started);
        // the failure's console tail is what the guest printed itself, not the dump we asked for
        List<String> ownConsole = linesBeforeDump < 0 ? console : console.subList(0, linesBeforeDump);
        GuestRun run = GuestVerdict.of(new GuestVerdict.Ending(runDir, ownConsole, exited, exitValue, wallTime,
                settings.timeout()), program(), bootAdvice());
        if (!settings.keepDisks() && ownsDisks()) {
            GuestRunDir.deleteDisks(runDir, settings.diskSizes().size());
        }
        return run;
    }

    /** Checks the host, then makes the run directory: disks (unless reused), init, its parameters, the payload's environment. */
    protected final Path prepareRun() {
        checkPrerequisites();
        Path runDir = runDirectory();
        Map<String, String> params = GuestRunDir.layout(runDir, IntStream.range(0, settings.diskSizes().size())
                .mapToObj(i -> kind.devicePrefix() + (char) ('a' + i)).toList(), settings.volumeGroups());
        params.put(GuestEnv.CGROUP_MODE, settings.cgroupMode().guestName());
        params.put(GuestEnv.CGROUP_ROOT, settings.cgroupRoot());
        params.put("LVMQOS_EXTRA_MODULES", String.join(" ", settings.extraModules()));
        params.put("LVMQOS_PAYLOAD", settings.payload());
        params.putAll(kindParameters());
        GuestRunDir.prepare(runDir, ownsDisks() ? settings.diskSizes() : List.of(), params,
                GuestRunDir.payloadEnvironment(payloadEnvironment()));
        return runDir;
    }

    protected final GuestProcess start(Path runDir) {
        try {
            return GuestProcess.start(kind.name(), command(runDir), kind.signature(runDir), runDir.resolve("console.log"),
                    Boolean.getBoolean(kind.echoProperty()));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + program(), e);
        }
    }

    private void checkPrerequisites() {
        if ("1".equals(System.getenv(kind.skipVariable()))) {
            Assumptions.abort(kind.skipVariable() + "=1: " + kind.tests() + " skipped on purpose");
        }
        List<String> missing = new ArrayList<>();
        if (!GuestHost.isRoot()) {
            missing.add("not root: " + kind.whyRoot() + "; run as root, or set " + kind.skipVariable()
                    + "=1 to skip these tests explicitly");
        }
        missing.addAll(kernelProblems());
        missing.addAll(GuestHost.missingTools(kind.moduleLoader(), settings.volumeGroups()));
        if (!missing.isEmpty()) {
            throw new UmlGuestException(Failure.PREREQUISITES, String.join("; ", missing), Optional.empty(), "");
        }
    }

    /**
     * Asks a guest that outran its timeout to print its blocked tasks, its memory and every task's
     * state on its console ({@link #askForTaskDump}), and waits until the console has been quiet for
     * two seconds (at most 30), so that console.log shows where it hung. Best effort: a guest whose
     * kernel no longer answers prints nothing.
     */
    private void dumpGuestTasks(Path runDir, GuestProcess guest) {
        try {
            if (!askForTaskDump(runDir, guest)) {
                return;
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            int lines = -1;
            int quietSeconds = 0;
            while (quietSeconds < 2 && System.nanoTime() < deadline) {
                wakeConsole(runDir);
                TimeUnit.SECONDS.sleep(1);
                int now = guest.console().size();
                quietSeconds = now == lines ? quietSeconds + 1 : 0;
                lines = now;
            }
        } catch (IOException e) {
            // no way to ask this guest: no dump
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // --- what each kind gives ---

    /** The host command that boots the guest. */
    protected abstract List<String> command(Path runDir);

    /** What is wrong with the kernel to boot, or with the host for it; empty when nothing is. */
    protected abstract List<String> kernelProblems();

    /** The kind's own parameters for init, beside the common ones. */
    protected abstract Map<String, String> kindParameters();

    /** The program that runs the guest, as a failure names it. */
    protected abstract String program();

    /** What a failure to boot advises. */
    protected abstract String bootAdvice();

    /** Asks the guest's kernel for its task dump (magic SysRq w, m, t); false when it cannot be asked. */
    protected abstract boolean askForTaskDump(Path runDir, GuestProcess guest) throws IOException, InterruptedException;

    /** Called once a second while the dump is awaited, for a kind whose console must be woken to flush. */
    protected void wakeConsole(Path runDir) throws IOException, InterruptedException {
    }

    /** What runs beside the guest until it ends (nothing, unless the kind says). */
    protected Alongside alongside(Path runDir, GuestProcess guest) {
        return () -> { };
    }

    /** False when the guest boots on disks it did not make, which it then neither creates nor deletes. */
    protected boolean ownsDisks() {
        return true;
    }

    /** A new directory under {@value GuestRunDir#RUN_DIR_PROPERTY}, unless the kind was given one. */
    protected Path runDirectory() {
        return GuestRunDir.create(settings.name());
    }

    /** The payload's variables: the test's, unless the kind adds its own before them. */
    protected Map<String, String> payloadEnvironment() {
        return settings.environment();
    }
}
