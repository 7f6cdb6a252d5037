package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.uml.GuestCommand.ok;

import csi.v1.Csi;
import io.lvmqos.e2e.CsiClient;
import io.lvmqos.e2e.DriverProcess;
import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The driver running inside the guest as the node plugin would: its own process, the shipped JVM
 * flags, a kubelet directory that is a shared mount (as /var/lib/kubelet is under Bidirectional
 * propagation), the guest's volume groups and cgroup tree. The one starter of a guest driver: checks
 * get one through {@link DriverForTheClass}, benchmarks through {@link #start(Options)} with the
 * measuring flags and log of their own; {@link Options} holds what differs between them.
 */
public final class GuestDriver implements AutoCloseable {

    public static final String NODE = "guest-node";
    public static final Path KUBELET = Path.of("/run/kubelet");
    public static final Path SOCKET = Path.of("/run/lvmqos/csi.sock");
    /** The plugin's own scratch directory, on the guest's private /run, as the DaemonSet's emptyDir is. */
    static final Path SHELL_DIR = Path.of("/run/lvmqos/tmp");
    private static final Duration STARTUP = Duration.ofSeconds(120);

    /**
     * What a caller may change about a guest driver: a command prefix (a mount namespace, a cgroup),
     * the node name, JVM flags after the shipped ones (a benchmark's log levels and GC log), the
     * plugin's options beyond those every guest driver gets, its log file (by default one per test
     * JVM in the out directory), and whether the start waits until Probe says ready, as a benchmark
     * that measures the first calls must.
     */
    public record Options(List<String> prefix, String node, List<String> jvmFlags, List<String> args,
            Optional<Path> log, boolean awaitReady) {
        public Options {
            prefix = List.copyOf(prefix);
            Objects.requireNonNull(node);
            jvmFlags = List.copyOf(jvmFlags);
            args = List.copyOf(args);
            Objects.requireNonNull(log);
        }

        /** The driver every check gets: node {@link GuestDriver#NODE}, no prefix, no options of its own. */
        public static Options standard() {
            return new Options(List.of(), NODE, List.of(), List.of(), Optional.empty(), false);
        }

        public Options behind(List<String> commandPrefix) {
            return new Options(commandPrefix, node, jvmFlags, args, log, awaitReady);
        }

        public Options as(String nodeName) {
            return new Options(prefix, nodeName, jvmFlags, args, log, awaitReady);
        }

        public Options jvmFlags(List<String> extraJvmFlags) {
            return new Options(prefix, node, extraJvmFlags, args, log, awaitReady);
        }

        public Options args(List<String> extraArgs) {
            return new Options(prefix, node, jvmFlags, extraArgs, log, awaitReady);
        }

        public Options log(Path file) {
            return new Options(prefix, node, jvmFlags, args, Optional.of(file), awaitReady);
        }

        public Options awaitingReady() {
            return new Options(prefix, node, jvmFlags, args, log, true);
        }
    }

    private DriverProcess process;
    private CsiClient client;
    private final Options options;

    private GuestDriver(Options options) {
        this.options = options;
    }

    /**
     * Starts a driver and returns once its socket answers (and, with {@link Options#awaitingReady()},
     * Probe says ready); the caller closes it. Checks use {@link DriverForTheClass}, which closes it
     * for them.
     */
    public static GuestDriver start(Options options) throws Exception {
        prepareKubeletDir();
        GuestDriver driver = new GuestDriver(options);
        driver.startProcess();
        return driver;
    }

    /** A tmpfs of its own, made rshared: mounts below it propagate to every peer and slave. */
    static void prepareKubeletDir() throws IOException {
        if (!Files.isDirectory(KUBELET)) {
            Files.createDirectories(KUBELET);
        }
        if (!GuestCommand.run("mountpoint", "-q", KUBELET.toString()).succeeded()) {
            ok("mount", "-t", "tmpfs", "-o", "size=64m", "kubelet", KUBELET.toString());
            ok("mount", "--make-rshared", KUBELET.toString());
        }
    }

    private void startProcess() throws Exception {
        List<String> args = new ArrayList<>(List.of("--node-id", options.node(), "--kubelet-dir", KUBELET.toString(),
                "--cgroup-root", GuestEnv.cgroupRoot().toString()));
        for (String vg : GuestEnv.volumeGroups()) {
            args.add("--volume-group");
            args.add(vg);
        }
        if (!options.args().contains("--lvm-shell-dir") && !options.args().contains("--fork-lvm")) {
            // The DaemonSet gives the plugin an emptyDir of its own at /tmp. A guest's /tmp is the
            // host's, shared by every guest running at once, and a lock one guest's kernel holds is
            // invisible to another's: one driver's start took another guest's lvm shell directory
            // for abandoned and removed it mid-run (csi-sanity failed on it, 2026-12-07).
            args.addAll(List.of("--lvm-shell-dir", SHELL_DIR.toString()));
        }
        args.addAll(options.args());
        List<String> jvmFlags = new ArrayList<>(DriverProcess.shippedJvmFlags());
        jvmFlags.addAll(options.jvmFlags());
        Path log = options.log().orElseGet(() -> GuestEnv.outDir().resolve("driver-" + ProcessHandle.current().pid() + ".log"));
        Files.createDirectories(SOCKET.getParent());
        Files.deleteIfExists(SOCKET);
        process = DriverProcess.start(options.prefix(), SOCKET, log, jvmFlags, args.toArray(String[]::new));
        try {
            CsiClient.awaitSocket(SOCKET, STARTUP);
            client = CsiClient.connect(SOCKET);
            if (options.awaitReady()) {
                awaitReady();
            }
        } catch (Exception | AssertionError e) {
            close();
            throw e;
        }
    }

    private void awaitReady() throws Exception {
        long deadline = System.nanoTime() + STARTUP.toNanos();
        while (!client.identity().probe(Csi.ProbeRequest.getDefaultInstance()).getReady().getValue()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the driver did not become ready within " + STARTUP + ":\n" + process.log());
            }
            Thread.sleep(100);
        }
    }

    public CsiClient client() {
        return client;
    }

    public DriverProcess process() {
        return process;
    }

    /** SIGKILL, as a crash or an OOM kill would end it. */
    public void kill() throws Exception {
        client.close();
        process.process().destroyForcibly().waitFor();
    }

    public void restart() throws Exception {
        close();
        startProcess();
    }

    public String log() throws IOException {
        return process.log();
    }

    @Override
    public void close() throws Exception {
        if (client != null) {
            client.close();
        }
        if (process != null && process.process().isAlive()) {
            process.terminate(Duration.ofSeconds(20));
        }
    }
}
