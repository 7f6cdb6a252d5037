package io.lvmqos.e2e;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.e2e.uml.GuestRun;
import io.lvmqos.e2e.uml.UmlGuest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The choice of user-mode-Linux kernel that {@code scripts/lib.sh} makes for ./run-tests, ./demo and
 * the csi-sanity script: the kernel it picks boots and is the one a guest runs, and when no kernel
 * boots, everything stops at once with one message, never a kernel's panic dump.
 */
class UmlKernelIT {

    /** What a kernel stack trace looks like on the console: never part of the one message. */
    private static final Pattern STACK_FRAME = Pattern.compile("\\[<[0-9a-f]+>\\]");

    private static Path top;
    private static Chosen chosen;

    /** What lvmqos_pick_uml exported. */
    private record Chosen(Path kernel, Path modules, String release) {
    }

    private record Outcome(int exitCode, String stdout, String stderr) {
    }

    @BeforeAll
    static void pickTheKernel() throws Exception {
        Assumptions.assumeFalse("1".equals(System.getenv(UmlGuest.SKIP_VARIABLE)),
                UmlGuest.SKIP_VARIABLE + "=1: real-kernel guest tests skipped on purpose");
        assertEquals(0, (int) (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid"),
                "the kernel probe boots UML guests and may fetch a kernel into /var/cache: run as root, or set "
                        + UmlGuest.SKIP_VARIABLE + "=1 to skip explicitly");
        top = checkoutTop();
        // No override: the choice ./run-tests makes on this machine.
        Outcome picked = shell(Map.of(), ". scripts/lib.sh && lvmqos_pick_uml && "
                + "printf '%s\\n%s\\n%s\\n' \"$LVMQOS_UML\" \"$LVMQOS_UML_MODULES\" \"$LVMQOS_UML_RELEASE\"");
        assertEquals(0, picked.exitCode(), "no kernel could be picked:\n" + picked.stderr());
        List<String> lines = picked.stdout().lines().toList();
        assertEquals(3, lines.size(), picked.stdout());
        chosen = new Chosen(Path.of(lines.get(0)), Path.of(lines.get(1)), lines.get(2));
    }

    @Test
    void thePickedKernelBootsAndIsTheOneTheGuestRuns() {
        assertTrue(Files.isRegularFile(chosen.modules().resolve("modules.dep")),
                "the exported module directory holds modules.dep: " + chosen.modules());

        GuestRun run = UmlGuest.builder()
                .name("picked-kernel")
                .kernel(new UmlGuest.Kernel(chosen.kernel(), chosen.modules()))
                .disk("1G")
                .volumeGroup("lvmqos", 0)
                .thinPool("lvmqos", "thinpool", "512M") // init loaded dm-thin-pool from that directory
                .payload("uname -r; lvm lvs --noheadings -o lv_name lvmqos")
                .build()
                .run()
                .requireSuccess();

        assertEquals(chosen.release(), run.kernelRelease().orElseThrow(), "init announces the kernel");
        assertEquals(chosen.release(), run.payloadLog().lines().findFirst().orElseThrow().strip());
        assertTrue(run.payloadLog().contains("thinpool"), run.payloadLog());
    }

    @Test
    void aKernelThatPanicsStopsWithOneMessage(@TempDir Path dir) throws Exception {
        // The real kernel, made to panic at boot the way the AMX hosts make Debian 12's panic: before init.
        Path panicking = executable(dir.resolve("panicking-linux.uml"),
                "#!/bin/sh\nexec " + chosen.kernel() + " \"$@\" init=/no-such-init\n");

        Outcome outcome = pickWith(panicking, chosen.modules());

        assertOneMessage(outcome, "LVMQOS_UML=" + panicking);
        assertTrue(outcome.stderr().contains("Kernel panic"), "says that it panicked:\n" + outcome.stderr());
    }

    @Test
    void aFileThatIsNotAKernelStopsWithOneMessage(@TempDir Path dir) throws Exception {
        Path notAKernel = executable(dir.resolve("linux.uml"), "this is not a kernel\n");

        Outcome outcome = pickWith(notAKernel, chosen.modules());

        assertOneMessage(outcome, "not a kernel");
    }

    @Test
    void modulesThatDoNotFitTheKernelAreRefused(@TempDir Path dir) throws Exception {
        Path otherRelease = Files.createDirectories(dir.resolve("modules/0.0.0-other"));
        Files.writeString(otherRelease.resolve("modules.dep"), "");

        Outcome outcome = pickWith(chosen.kernel(), otherRelease.getParent());

        assertOneMessage(outcome, "do not fit");
    }

    @Test
    void theDemoStopsAtOnceWithoutAKernelThatBoots(@TempDir Path dir) throws Exception {
        Path notAKernel = executable(dir.resolve("linux.uml"), "this is not a kernel\n");

        Outcome outcome = run(Map.of(UmlGuest.KERNEL_VARIABLE, notAKernel.toString(),
                UmlGuest.MODULES_VARIABLE, chosen.modules().toString()), List.of("./demo"));

        // the demo shows one line per step on standard output: the kernel's is the last, and failed
        List<String> steps = outcome.stdout().strip().lines().toList();
        assertTrue(steps.getLast().startsWith("choosing a user-mode-Linux kernel") && steps.getLast().endsWith("FAILED"),
                "the kernel step is the last on standard output, failed:\n" + outcome.stdout());
        assertMessage(outcome, "not a kernel");
        assertFalse(outcome.stderr().contains("booting") || outcome.stdout().contains("booting"),
                "the demo never got to boot:\n" + outcome.stdout() + outcome.stderr());
    }

    private static void assertOneMessage(Outcome outcome, String detail) {
        assertEquals("", outcome.stdout().strip(), "nothing on standard output");
        assertMessage(outcome, detail);
    }

    private static void assertMessage(Outcome outcome, String detail) {
        String err = outcome.stderr();
        assertEquals(1, outcome.exitCode(), err);
        assertEquals(1, err.lines().map(String::strip).filter(line -> line.startsWith("error:")).count(), "one message:\n" + err);
        assertTrue(err.contains("no user-mode-Linux kernel that boots"), err);
        assertTrue(err.contains(detail), "names what was tried (" + detail + "):\n" + err);
        assertTrue(err.contains("LVMQOS_UML_MODULES="), "says how to bring a kernel:\n" + err);
        assertFalse(STACK_FRAME.matcher(err).find(), "no kernel stack trace:\n" + err);
        assertTrue(err.lines().count() <= 12, "a message, not a console dump:\n" + err);
    }

    private static Outcome pickWith(Path kernel, Path modules) throws Exception {
        return shell(Map.of(UmlGuest.KERNEL_VARIABLE, kernel.toString(), UmlGuest.MODULES_VARIABLE, modules.toString()),
                ". scripts/lib.sh && lvmqos_pick_uml");
    }

    private static Outcome shell(Map<String, String> env, String script) throws Exception {
        return run(env, List.of("sh", "-c", script));
    }

    private static Outcome run(Map<String, String> env, List<String> argv) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(new ArrayList<>(argv)).directory(top.toFile());
        builder.environment().remove(UmlGuest.KERNEL_VARIABLE);
        builder.environment().remove(UmlGuest.MODULES_VARIABLE);
        builder.environment().putAll(env);
        Path out = Files.createTempFile("kernel-pick", ".out");
        Path err = Files.createTempFile("kernel-pick", ".err");
        try {
            Process process = builder.redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
                    .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            // a fetch of a kernel on a cold cache included; every probe has its own 60 s bound
            if (!process.waitFor(10, TimeUnit.MINUTES)) {
                process.destroyForcibly();
                throw new AssertionError(argv + " did not finish in 10 minutes");
            }
            return new Outcome(process.exitValue(), Files.readString(out, UTF_8), Files.readString(err, UTF_8));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    private static Path executable(Path file, String content) throws IOException {
        Files.writeString(file, content);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
        return file;
    }

    /** The checkout's top: the nearest directory upwards that holds scripts/lib.sh. */
    private static Path checkoutTop() {
        Path dir = Path.of("").toAbsolutePath();
        for (Path candidate = dir; candidate != null; candidate = candidate.getParent()) {
            if (Files.isRegularFile(candidate.resolve("scripts/lib.sh"))) {
                return candidate;
            }
        }
        throw new AssertionError("no scripts/lib.sh above " + dir);
    }
}
