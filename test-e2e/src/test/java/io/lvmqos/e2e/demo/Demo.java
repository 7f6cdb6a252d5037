package io.lvmqos.e2e.demo;

import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.GuestRun;
import io.lvmqos.e2e.uml.UmlGuest;
import io.lvmqos.e2e.uml.UmlGuestException;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;

/**
 * The host side of ./demo: boots a user-mode-Linux node with a sparse-file volume group and runs
 * {@link DemoNode} in it, copying what it prints to this terminal as it prints it. The exit code is
 * the guest's.
 *
 * <p>System properties (./demo sets them): {@code lvmqos.jar}, the driver's jar,
 * {@code lvmqos.demo.runDir}, this run's directory, which ./demo made and wrote its build log into
 * (unset: a new one under target/demo-runs), and {@code lvmqos.imageDir}, scripts/build-image's
 * output, whose pause and fio images containerd runs the first pod with. Whatever the outcome, the
 * last lines say where the run directory is and what each log in it holds.
 */
public final class Demo {

    /** Time for the guest as a whole: boot, the demo, halt. The demo itself needs well under 3 minutes. */
    static final Duration TIMEOUT = Duration.ofMinutes(10);
    /** The guest's JVM: small and quick to start, like the guest checks' (see GuestJUnit). */
    static final List<String> GUEST_JVM_OPTIONS = List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx128m",
            "-XX:-UsePerfData", "--enable-native-access=ALL-UNNAMED",
            // the CSI client's Netty would otherwise warn about the guest's network, which it does not use
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=error");
    static final String NAME = "demo";
    static final String RUN_DIR_PROPERTY = "lvmqos.demo.runDir";
    /** Where scripts/build-image left the images containerd imports in the guest (./demo sets it). */
    static final String IMAGE_DIR_PROPERTY = "lvmqos.imageDir";

    private Demo() {
    }

    public static void main(String[] args) {
        DemoOptions options;
        try {
            options = DemoOptions.parse(List.of(args));
        } catch (IllegalArgumentException e) {
            System.err.println(refusal(e));
            System.exit(2);
            return;
        }
        System.exit(run(options));
    }

    /** What a bad option gets, here and from ./demo's own check before anything slow. */
    static String refusal(IllegalArgumentException badOption) {
        return "demo: " + badOption.getMessage() + " (see ./demo --help)";
    }

    /** The kernel ./demo chose for this machine (scripts/lib.sh exports it), for the header. */
    private static String kernelDescription() {
        String release = System.getenv("LVMQOS_UML_RELEASE");
        String origin = System.getenv("LVMQOS_UML_ORIGIN");
        if (release == null) {
            return "the kernel of linux.uml on PATH";
        }
        return "kernel " + release + (origin == null ? "" : ": " + origin);
    }

    static int run(DemoOptions options) {
        Path runDir = runDirectory();
        try {
            return run(options, runDir);
        } finally {
            System.out.println();
            DemoRunFiles.describe(runDir).forEach(System.out::println);
            System.out.flush();
        }
    }

    private static Path runDirectory() {
        String given = System.getProperty(RUN_DIR_PROPERTY);
        if (given != null) {
            return Path.of(given).toAbsolutePath();
        }
        return Path.of("target/demo-runs", NAME + "-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern(
                "yyyyMMdd-HHmmss")) + "-" + ProcessHandle.current().pid()).toAbsolutePath();
    }

    private static int run(DemoOptions options, Path runDir) {
        UmlGuest guest = UmlGuest.builder()
                .name(NAME)
                .runDirectory(runDir)
                .disk(options.disk().value())
                .disk("1G") // containerd's content and snapshots: the fio image, unpacked
                .memory("2048M") // beside the driver's JVM and the guest's: containerd, its shims, fio
                .volumeGroup("lvmqos", 0)
                .cgroup(CgroupMode.V2)
                .timeout(TIMEOUT)
                .env("LVMQOS_IMAGE_DIR", Path.of(System.getProperty(IMAGE_DIR_PROPERTY, "target/image"))
                        .toAbsolutePath().toString())
                .payload(guestCommandLine(options))
                .build();
        say("lvmqos demo: booting a user-mode-Linux node (" + kernelDescription() + ", run as a process) with a "
                + options.disk().text() + " sparse file as its disk");
        CompletableFuture<GuestRun> run = CompletableFuture.supplyAsync(guest::run);
        Echo echo = new Echo();
        try {
            while (!run.isDone()) {
                echo.copy(runDir.resolve("out/payload.log"));
                Thread.sleep(100);
            }
            GuestRun result = run.get();
            echo.copy(result.outDir().resolve("payload.log"));
            echo.finish();
            if (result.exitCode() != 0) {
                System.err.println("demo: failed (exit code " + result.exitCode() + "); the logs below say more");
            }
            return result.exitCode();
        } catch (ExecutionException e) {
            echo.finish();
            Throwable cause = e.getCause();
            System.err.println("demo: " + (cause instanceof UmlGuestException ? cause.getMessage() : cause.toString()));
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 130;
        }
    }

    /** The guest runs this JVM's own class path with the host's JDK, both visible through its hostfs root. */
    static String guestCommandLine(DemoOptions options) {
        List<String> classPath = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(entry -> !entry.isEmpty())
                .map(entry -> Path.of(entry).toAbsolutePath().toString())
                .toList();
        List<String> argv = new ArrayList<>();
        argv.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        argv.addAll(GUEST_JVM_OPTIONS);
        if (Runtime.version().feature() >= 23) {
            // protobuf reads arrays through sun.misc.Unsafe, which JDK 24 and later warn about
            argv.add("--sun-misc-unsafe-memory-access=allow");
        }
        String jar = System.getProperty("lvmqos.jar");
        if (jar != null) {
            argv.add("-Dlvmqos.jar=" + Path.of(jar).toAbsolutePath());
        }
        argv.addAll(List.of("-cp", String.join(File.pathSeparator, classPath), DemoNode.class.getName()));
        argv.addAll(options.toArgs());
        return argv.stream().map(UmlGuest::shellQuote).collect(Collectors.joining(" "));
    }

    private static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    /** Copies the guest's output file to standard output as it grows, whole lines at a time. */
    private static final class Echo {
        private long offset;
        private final StringBuilder partial = new StringBuilder();

        void copy(Path file) {
            if (!Files.exists(file)) {
                return;
            }
            try (InputStream in = Files.newInputStream(file)) {
                in.skipNBytes(offset);
                byte[] fresh = in.readAllBytes();
                offset += fresh.length;
                partial.append(new String(fresh, java.nio.charset.StandardCharsets.UTF_8));
            } catch (IOException e) {
                return; // read again on the next round
            }
            int end = partial.lastIndexOf("\n");
            if (end >= 0) {
                System.out.print(partial.substring(0, end + 1));
                System.out.flush();
                partial.delete(0, end + 1);
            }
        }

        void finish() {
            if (!partial.isEmpty()) {
                System.out.println(partial);
                partial.setLength(0);
            }
        }
    }
}
