package io.lvmqos.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The driver jar started as its own process, with the JVM flags the project ships. */
public final class DriverProcess implements AutoCloseable {

    private final Process process;
    private final Path socket;
    private final Path log;

    private DriverProcess(Process process, Path socket, Path log) {
        this.process = process;
        this.socket = socket;
        this.log = log;
    }

    public static Path jar() {
        String configured = System.getProperty("lvmqos.jar", System.getenv().getOrDefault("LVMQOS_JAR",
                "../csi-node/target/lvmqos.jar"));
        Path jar = Path.of(configured).toAbsolutePath().normalize();
        if (!Files.isRegularFile(jar)) {
            throw new AssertionError("driver jar " + jar + " is missing: run mvn package first");
        }
        return jar;
    }

    public static Path javaBinary() {
        return Path.of(System.getProperty("java.home"), "bin", "java");
    }

    /** The JVM flags shipped in deploy/jvm.options (one per line, # comments). */
    public static List<String> shippedJvmFlags() throws IOException {
        // the jar sits at <repository>/csi-node/target/lvmqos.jar
        Path options = jar().getParent().getParent().getParent().resolve("deploy").resolve("jvm.options");
        List<String> flags = new ArrayList<>();
        for (String line : Files.readAllLines(options)) {
            String flag = line.strip();
            if (!flag.isEmpty() && !flag.startsWith("#")) {
                flags.add(flag);
            }
        }
        return flags;
    }

    public static DriverProcess start(Path socket, Path log, List<String> jvmFlags, String... args) throws IOException {
        return start(List.of(), socket, log, jvmFlags, args);
    }

    /** Starts the driver behind a command prefix, e.g. {@code unshare -m} for a mount namespace of its own. */
    public static DriverProcess start(List<String> prefix, Path socket, Path log, List<String> jvmFlags, String... args)
            throws IOException {
        List<String> command = new ArrayList<>(prefix);
        command.add(javaBinary().toString());
        command.addAll(jvmFlags);
        command.add("-jar");
        command.add(jar().toString());
        command.add("--endpoint");
        command.add("unix://" + socket);
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        return new DriverProcess(process, socket, log);
    }

    public Process process() {
        return process;
    }

    public Path socket() {
        return socket;
    }

    public String log() throws IOException {
        return Files.readString(log);
    }

    /** SIGTERM, as the kubelet sends it, then waits for the exit. */
    public int terminate(Duration timeout) throws InterruptedException {
        process.destroy();
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("driver did not exit within " + timeout + " of SIGTERM");
        }
        return process.exitValue();
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }
}
