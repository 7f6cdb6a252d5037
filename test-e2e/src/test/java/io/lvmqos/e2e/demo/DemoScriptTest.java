package io.lvmqos.e2e.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * ./demo answers a bad option itself, before its root check, package installation, kernel probe and
 * builds, by the rules of {@link DemoOptions}: the two are run on the same options here and must give
 * the same answers, refusals word for word.
 */
class DemoScriptTest {

    /** Commands of the slow steps, each replaced by a stub that records its call and fails. */
    private static final List<String> SLOW_COMMANDS = List.of("apt-get", "apt-cache", "apt", "dpkg", "dpkg-query",
            "mvn", "java", "javac", "curl", "wget", "debootstrap", "umoci", "linux.uml", "linux", "patchelf");

    /** Values for the quantity options: as operators write them, and near misses of every kind. */
    private static final List<String> QUANTITIES = List.of("256Mi", "8Mi", "300", "2Gi", "1Gi", "64Mi", "64Gi",
            "65Gi", "63Mi", "1.5Gi", "0.5Gi", "1.25Mi", "1.3Mi", "2k", "2.5k", "1M", "1e6", "1E6", "1.5e6", "4e9",
            "1e31", "1e-3", "100000m", "1500m", "1E", "1Ei", "0.000001Ti", "0.00000095367431640625Ti", "1Ti", "1.0Ti",
            "1.00000000000000Ti", "1.000000000000000Ti", "+2Mi", "007", "0", "00", "-1", "0.0", ".5Gi", "5.Mi", "1.",
            ".", "", " 3", "3 ", "banana", "Mi", "5 Mi", "1,000", "0x10", "1e", "1e+3", "1e-0", "4294967296",
            "4294967297", "999999999999999999", "9999999999999999999", "1048576.5", "1048576.0", "3.000000001Gi",
            "1000000", "1000001", "20", "19", "19.5", "6.4e-8Ti", "2.5E-1Ki", "1.5Mi\n");

    private static Path checkout() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("demo")) && Files.isRegularFile(dir.resolve("pom.xml"))) {
                return dir;
            }
        }
        throw new AssertionError("no checkout with ./demo above " + Path.of("").toAbsolutePath());
    }

    private record Answer(int exitCode, String stdout, String stderr) {
    }

    private static Answer runDemo(Map<String, String> environment, List<String> args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("/bin/sh", checkout().resolve("demo").toString()));
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().putAll(environment);
        Path out = Files.createTempFile("demo-out", ".txt");
        Path err = Files.createTempFile("demo-err", ".txt");
        try {
            Process process = builder.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError("./demo " + args + " did not finish in 60 s");
            }
            return new Answer(process.exitValue(), Files.readString(out), Files.readString(err));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    /** What DemoOptions makes of the options, in the form ./demo prints with LVMQOS_DEMO_CHECK_ONLY set. */
    private static Answer expected(List<String> args) {
        try {
            DemoOptions options = DemoOptions.parse(args);
            return new Answer(0, "size=%d bps=%d iops=%d runtime=%d disk=%d disk_text=%s\n".formatted(
                    options.size().value(), options.bps().value(), options.iops().value(), options.runtimeSeconds(),
                    options.disk().value(), options.disk().text()), "");
        } catch (IllegalArgumentException refused) {
            return new Answer(2, "", Demo.refusal(refused) + "\n");
        }
    }

    private static List<List<String>> candidates() {
        List<List<String>> candidates = new ArrayList<>();
        for (String value : QUANTITIES) {
            candidates.add(List.of("--size", value));
            candidates.add(List.of("--bps=" + value));
            candidates.add(List.of("--iops", value));
            candidates.add(List.of("--size", "128Mi", "--disk", value));
        }
        for (String runtime : List.of("5", "2", "120", "1", "121", "007", "0", "000", "5s", "1.5", "", "1000", "-3")) {
            candidates.add(List.of("--runtime", runtime));
        }
        candidates.addAll(List.of(List.of(), List.of("--sise=1Gi"), List.of("--size"), List.of("extra"),
                List.of("--bps", "4Mi", "--iops"), List.of("--size", "--bps"), List.of("--size=1Gi", "--disk", "3Gi"),
                List.of("--size=1Gi", "--disk", "3136Mi"), List.of("--size=1Gi", "--disk", "3135Mi"),
                List.of("--bps", "banana", "--size", "1Mi"), List.of("--disk", "1Gi", "--size", "1Gi"),
                List.of("--size", "300Mi", "--size", "200Mi"), List.of("--iops=", "--bps=x"), List.of("--=3"),
                List.of("--size=64Gi", "--runtime=120", "--bps=4Gi", "--iops=1M", "--disk=1Ti")));
        return candidates;
    }

    @Test
    void theScriptAndDemoOptionsGiveTheSameAnswers() throws Exception {
        List<String> disagreements = new ArrayList<>();
        int accepted = 0;
        int refused = 0;
        for (List<String> args : candidates()) {
            Answer script = runDemo(Map.of("LVMQOS_DEMO_CHECK_ONLY", "1"), args);
            Answer java = expected(args);
            if (!script.equals(java)) {
                disagreements.add(args + ":\n  ./demo      " + script + "\n  DemoOptions " + java);
            }
            accepted += java.exitCode() == 0 ? 1 : 0;
            refused += java.exitCode() == 2 ? 1 : 0;
        }
        assertEquals("", String.join("\n", disagreements));
        // the table tries both sides of each rule
        assertTrue(accepted >= 40 && refused >= 100, accepted + " accepted, " + refused + " refused");
    }

    /** A directory of stubs for the slow steps' commands, and {@code id} saying root, first on PATH. */
    private static Map<String, String> stubbedEnvironment(Path dir) throws IOException {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Path calls = dir.resolve("calls");
        for (String command : Stream.concat(SLOW_COMMANDS.stream(), Stream.of("id")).toList()) {
            String body = command.equals("id") ? "echo 0\n"
                    : "echo \"$0 $*\" >> '" + calls + "'\necho \"stub $0 called\" >&2\nexit 97\n";
            Path stub = bin.resolve(command);
            Files.writeString(stub, "#!/bin/sh\n" + body, StandardCharsets.UTF_8);
            Files.setPosixFilePermissions(stub, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        Map<String, String> environment = new HashMap<>();
        environment.put("PATH", bin + ":" + System.getenv("PATH"));
        environment.put("LVMQOS_DEMO_RUNS", Files.createDirectories(dir.resolve("runs")).toString());
        environment.put("JAVA_HOME", dir.resolve("no-jdk").toString());
        return environment;
    }

    @Test
    void aBadOptionIsAnsweredBeforeTheRootCheckAndAnySlowStep(@TempDir Path dir) throws Exception {
        Map<String, String> environment = stubbedEnvironment(dir);
        for (List<String> args : List.of(List.of("--bps", "banana"), List.of("--colour"), List.of("--size"),
                List.of("--size", "1Mi"), List.of("--iops", "2.5"), List.of("--runtime", "1"),
                List.of("--size", "1Gi", "--disk", "1Gi"))) {
            Answer answer = runDemo(environment, args);
            assertEquals(expected(args), answer, "./demo " + args);
            assertFalse(Files.exists(dir.resolve("calls")), "./demo " + args + " ran " + readOrEmpty(dir.resolve("calls")));
            try (Stream<Path> runs = Files.list(dir.resolve("runs"))) {
                assertEquals(List.of(), runs.toList(), "no run directory for a refused option");
            }
        }
    }

    /** The control for the test above: with good options the same stubs are reached, so their silence there means something. */
    @Test
    void goodOptionsGoOnToTheSlowSteps(@TempDir Path dir) throws Exception {
        Answer answer = runDemo(stubbedEnvironment(dir), List.of("--bps", "4Mi"));
        assertNotEquals(0, answer.exitCode(), answer.toString());
        assertNotEquals(2, answer.exitCode(), answer.toString());
        assertTrue(Files.exists(dir.resolve("calls")), "no stub was called: " + answer);
    }

    private static String readOrEmpty(Path file) throws IOException {
        return Files.exists(file) ? Files.readString(file) : "";
    }
}
