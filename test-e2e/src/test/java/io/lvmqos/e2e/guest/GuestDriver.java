package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.uml.GuestCommand.ok;

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

/**
 * The driver running inside the guest as the node plugin would: its own process, the shipped JVM
 * flags, a kubelet directory that is a shared mount (as /var/lib/kubelet is under Bidirectional
 * propagation), the guest's volume groups and cgroup tree. Checks start it through
 * {@link DriverForTheClass}; this class is the process wrapper.
 */
public final class GuestDriver implements AutoCloseable {

    public static final String NODE = "guest-node";
    public static final Path KUBELET = Path.of("/run/kubelet");
    public static final Path SOCKET = Path.of("/run/lvmqos/csi.sock");
    /** The plugin's own scratch directory, on the guest's private /run, as the DaemonSet's emptyDir is. */
    static final Path SHELL_DIR = Path.of("/run/lvmqos/tmp");

    private DriverProcess process;
    private CsiClient client;
    private final List<String> prefix;
    private final List<String> extraArgs;
    private final String node;

    private GuestDriver(List<String> prefix, String node, List<String> extraArgs) {
        this.prefix = List.copyOf(prefix);
        this.node = node;
        this.extraArgs = List.copyOf(extraArgs);
    }

    /** The only starter: {@link DriverForTheClass} is how checks get a driver. */
    static GuestDriver launch(List<String> prefix, String node, List<String> extraArgs) throws Exception {
        prepareKubeletDir();
        GuestDriver driver = new GuestDriver(prefix, node, extraArgs);
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
        List<String> args = new ArrayList<>(List.of("--node-id", node, "--kubelet-dir", KUBELET.toString(),
                "--cgroup-root", GuestEnv.cgroupRoot().toString()));
        for (String vg : GuestEnv.volumeGroups()) {
            args.add("--volume-group");
            args.add(vg);
        }
        if (!extraArgs.contains("--lvm-shell-dir") && !extraArgs.contains("--fork-lvm")) {
            // The DaemonSet gives the plugin an emptyDir of its own at /tmp. A guest's /tmp is the
            // host's, shared by every guest running at once, and a lock one guest's kernel holds is
            // invisible to another's: one driver's start took another guest's lvm shell directory
            // for abandoned and removed it mid-run (csi-sanity failed on it, 2026-12-07).
            args.addAll(List.of("--lvm-shell-dir", SHELL_DIR.toString()));
        }
        args.addAll(extraArgs);
        Files.createDirectories(SOCKET.getParent());
        Files.deleteIfExists(SOCKET);
        process = DriverProcess.start(prefix, SOCKET, GuestEnv.outDir().resolve("driver-" + ProcessHandle.current().pid() + ".log"), DriverProcess.shippedJvmFlags(),
                args.toArray(String[]::new));
        CsiClient.awaitSocket(SOCKET, Duration.ofSeconds(120));
        client = CsiClient.connect(SOCKET);
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
