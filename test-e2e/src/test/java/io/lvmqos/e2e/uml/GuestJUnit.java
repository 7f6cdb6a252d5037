package io.lvmqos.e2e.uml;

import io.lvmqos.e2e.uml.UmlGuestException.Failure;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.junit.jupiter.api.DynamicTest;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import org.xml.sax.SAXException;

/**
 * Runs guest-side JUnit classes inside a guest of either kind ({@link UmlGuest}, or
 * {@code io.lvmqos.e2e.qemu.QemuGuest}: any {@link GuestSpec}) and brings their results back to the host.
 *
 * <p>The guest runs the host's own JDK with the host test JVM's class path (both visible through the
 * guest's read-only view of the host's root) and JUnit's ConsoleLauncher, which writes the legacy XML report into the run's
 * output directory; the host reads that report. Guest-side classes live in {@code io.lvmqos.e2e.guest}
 * and are named {@code *Check}, so that surefire and failsafe never run them on the host.
 *
 * <pre>{@code
 * @TestFactory
 * Stream<DynamicTest> lvmInTheGuest() {
 *     return GuestJUnit.dynamicTests(UmlGuest.builder().disk("4G").volumeGroup("lvmqos", 0), MyCheck.class);
 * }
 * }</pre>
 */
public final class GuestJUnit {
    /** The ConsoleLauncher's legacy report, one file for the whole Jupiter engine. */
    static final String REPORT_FILE = "TEST-junit-jupiter.xml";
    /**
     * JUnit's start in the guest (ConsoleLauncher discovering one class, host JDK 25, measured on a busy
     * 2-core machine): 5.6 to 8.5 s with -XX:+UseSerialGC -XX:TieredStopAtLevel=1 alone, 2.8 to 4.1 s
     * with these. A small heap and no perf-data file mean fewer pages to fault in, which is slow in UML.
     * Guest checks spend their time in commands, so the JIT's top tier would not pay off either.
     */
    static final List<String> GUEST_JVM_OPTIONS =
            List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx128m", "-XX:-UsePerfData");

    // ConsoleLauncher's exit codes: 0 all passed, 1 something failed.
    private static final int LAUNCHER_TESTS_FAILED = 1;

    private GuestJUnit() {
    }

    /** The guest run and what each guest-side test did. */
    public record Report(GuestRun guest, List<GuestTestResult> tests) {

        /** Prints a file the checks left in the run's out dir, each line after {@code prefix}; nothing if there is none. */
        public void printOutFile(String name, String prefix) throws IOException {
            Path file = guest.outDir().resolve(name);
            if (Files.exists(file)) {
                Files.readAllLines(file).forEach(line -> System.out.println(prefix + line));
            }
        }
    }

    /**
     * Boots a guest configured like {@code guest} (which is not changed; its payload is replaced) and
     * runs the given classes in it.
     *
     * @throws UmlGuestException if the guest failed, or JUnit in the guest reported no test at all
     */
    public static Report run(GuestSpec guest, Class<?>... checks) {
        if (checks.length == 0) {
            throw new IllegalArgumentException("no guest-side test class given");
        }
        GuestRun run = guest.runWith(launcherCommandLine(List.of(checks)));
        Path report = run.outDir().resolve("reports").resolve(REPORT_FILE);
        if (!Files.exists(report)) {
            throw launcherFailure(run, "JUnit wrote no report " + report + " (launcher exit code " + run.exitCode() + ")");
        }
        List<GuestTestResult> tests = new ArrayList<>(parseReport(report));
        if (tests.isEmpty()) {
            throw launcherFailure(run, "JUnit found no tests in " + Arrays.toString(checks));
        }
        boolean anyFailed = tests.stream().anyMatch(test -> test.status() == GuestTestResult.Status.FAILED
                || test.status() == GuestTestResult.Status.ERRORED);
        if (run.exitCode() != 0 && !(anyFailed && run.exitCode() == LAUNCHER_TESTS_FAILED)) {
            // The launcher failed without a failing test to show for it (a class that failed to load,
            // for one): report that as a failed test of its own, never as a pass.
            tests.add(new GuestTestResult(GuestJUnit.class.getName(), "launcher", GuestTestResult.Status.ERRORED,
                    "exit code " + run.exitCode(),
                    "JUnit's launcher exited " + run.exitCode() + " in the guest; its output:\n"
                            + UmlGuest.tail(run.payloadLog(), UmlGuest.CONSOLE_TAIL_LINES),
                    Duration.ZERO));
        }
        return new Report(run, List.copyOf(tests));
    }

    /**
     * Boots a guest configured like {@code guest}, runs the given classes in it, and cuts its power
     * when one of them creates {@code out/<marker>} ({@link UmlGuest#runUntilPowerCut}); the classes
     * leave no report, since they never end.
     */
    public static UmlGuest.PowerCut runUntilPowerCut(UmlGuest.Builder guest, String marker, Class<?>... checks) {
        return guest.copy().payload(launcherCommandLine(List.of(checks))).build().runUntilPowerCut(marker);
    }

    /** {@link #run} as one dynamic test per guest-side test, for a host {@code @TestFactory}. */
    public static Stream<DynamicTest> dynamicTests(GuestSpec guest, Class<?>... checks) {
        return dynamicTests(run(guest, checks));
    }

    /** One dynamic test per guest-side test of a report, for a host that looked at the run first. */
    public static Stream<DynamicTest> dynamicTests(Report report) {
        System.out.println("guest JUnit run: " + report.guest().timings() + " (" + report.guest().runDir() + ")");
        return report.tests().stream().map(test -> DynamicTest.dynamicTest(test.displayName(), test::verify));
    }

    /**
     * The guest's command line: the host's java and class path, ConsoleLauncher, one selector per class,
     * and the report written under {@code $LVMQOS_OUT}, which the guest's shell expands.
     */
    static String launcherCommandLine(List<Class<?>> checks) {
        // Absolute, because the guest's payload runs in /tmp, not in this JVM's working directory.
        List<String> classPath = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(entry -> !entry.isEmpty())
                .map(entry -> Path.of(entry).toAbsolutePath().toString())
                .toList();
        requireVisibleInGuest(classPath);
        List<String> argv = new ArrayList<>();
        argv.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        argv.addAll(GUEST_JVM_OPTIONS);
        Optional.ofNullable(System.getProperty("lvmqos.jar")).ifPresent(jar -> argv.add("-Dlvmqos.jar=" + jar));
        argv.addAll(List.of("-cp", String.join(File.pathSeparator, classPath),
                "org.junit.platform.console.ConsoleLauncher", "execute",
                "--disable-banner", "--disable-ansi-colors", "--details=tree", "--details-theme=ascii"));
        checks.forEach(check -> argv.add("--select-class=" + check.getName()));
        return argv.stream().map(UmlGuest::shellQuote).collect(Collectors.joining(" "))
                + " \"--reports-dir=$" + GuestEnv.OUT + "/reports\"";
    }

    /** Reads the legacy XML report: one result per {@code testcase} element. */
    static List<GuestTestResult> parseReport(Path report) {
        try {
            DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            factory.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
            NodeList cases = factory.newDocumentBuilder().parse(report.toFile()).getElementsByTagName("testcase");
            List<GuestTestResult> results = new ArrayList<>();
            for (int i = 0; i < cases.getLength(); i++) {
                results.add(toResult((Element) cases.item(i)));
            }
            return results;
        } catch (IOException | SAXException | ParserConfigurationException e) {
            throw new IllegalStateException("cannot read the guest's JUnit report " + report, e);
        }
    }

    private static GuestTestResult toResult(Element testCase) {
        String className = testCase.getAttribute("classname");
        String name = testCase.getAttribute("name");
        // The legacy report formats times with Locale.US grouping: "1,234.5".
        String seconds = testCase.getAttribute("time").replace(",", "");
        Duration time = seconds.isEmpty() ? Duration.ZERO : Duration.ofNanos(Math.round(Double.parseDouble(seconds) * 1e9));
        Optional<Element> failure = firstChild(testCase, "failure");
        if (failure.isPresent()) {
            return new GuestTestResult(className, name, GuestTestResult.Status.FAILED,
                    failure.get().getAttribute("message"), failure.get().getTextContent(), time);
        }
        Optional<Element> error = firstChild(testCase, "error");
        if (error.isPresent()) {
            return new GuestTestResult(className, name, GuestTestResult.Status.ERRORED,
                    error.get().getAttribute("message"), error.get().getTextContent(), time);
        }
        Optional<Element> skipped = firstChild(testCase, "skipped");
        if (skipped.isPresent()) {
            // @Disabled gives a message attribute; a failed assumption only a stack trace, whose first
            // line says why.
            String reason = skipped.get().getAttribute("message");
            if (reason.isEmpty()) {
                reason = skipped.get().getTextContent().strip().lines().findFirst().orElse("");
            }
            return new GuestTestResult(className, name, GuestTestResult.Status.SKIPPED, reason, "", time);
        }
        return new GuestTestResult(className, name, GuestTestResult.Status.PASSED, "", "", time);
    }

    private static Optional<Element> firstChild(Element parent, String tag) {
        NodeList found = parent.getElementsByTagName(tag);
        return found.getLength() == 0 ? Optional.empty() : Optional.of((Element) found.item(0));
    }

    private static void requireVisibleInGuest(List<String> classPath) {
        List<String> hidden = classPath.stream()
                .filter(entry -> entry.startsWith("/run/"))
                .toList();
        if (!hidden.isEmpty()) {
            throw new IllegalStateException("class path entries under /run are hidden in the guest"
                    + " (it mounts its own tmpfs there): " + hidden);
        }
    }

    private static UmlGuestException launcherFailure(GuestRun run, String detail) {
        return new UmlGuestException(Failure.PAYLOAD_FAILED, detail, Optional.of(run.runDir()),
                UmlGuest.tail(run.console(), UmlGuest.CONSOLE_TAIL_LINES));
    }
}
