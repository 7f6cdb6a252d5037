package io.lvmqos.e2e.demo;

import static io.lvmqos.e2e.uml.GuestCommand.ok;

import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * A pod as kubelet makes one, without kubelet: a cgroup where the systemd cgroup driver puts it,
 * and a sandbox process (the pause container) in a container cgroup of its own below it, holding
 * the pod's mount namespace. The namespace is a slave copy of the node's (HostToContainer,
 * rslave), made before anything is published, so a volume reaches the pod only by mount
 * propagation, as it reaches a running container. Every command run in the pod gets a new
 * container cgroup, made when it starts (so after the publish), as a container started later
 * would; no process ever runs in the pod cgroup itself, which enables the memory controller for
 * its children as kubelet's does.
 */
final class DemoPod implements PodOnNode {

    /** The QoS classes, each with the slice kubelet's systemd driver puts its pods in. */
    enum QosClass {
        GUARANTEED("Guaranteed", ""), BURSTABLE("Burstable", "burstable"), BEST_EFFORT("BestEffort", "besteffort");

        private final String display;
        private final String slice;

        QosClass(String display, String slice) {
            this.display = display;
            this.slice = slice;
        }

        String display() {
            return display;
        }

        /** {@code kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_>.slice} and the like. */
        Path cgroupBelow(Path hierarchy, String uid) {
            Path kubepods = hierarchy.resolve("kubepods.slice");
            String escaped = uid.replace('-', '_');
            return slice.isEmpty() ? kubepods.resolve("kubepods-pod" + escaped + ".slice")
                    : kubepods.resolve("kubepods-" + slice + ".slice").resolve("kubepods-" + slice + "-pod" + escaped + ".slice");
        }
    }

    static final String NAMESPACE = "demo";

    private final String name;
    private final String uid;
    private final QosClass qos;
    private final Path cgroup;
    private final Process sandbox;

    private DemoPod(String name, String uid, QosClass qos, Path cgroup, Process sandbox) {
        this.name = name;
        this.uid = uid;
        this.qos = qos;
        this.cgroup = cgroup;
        this.sandbox = sandbox;
    }

    /** Makes the pod's cgroup and starts its sandbox in it, in a new rslave mount namespace. */
    static DemoPod start(String name, QosClass qos) throws IOException, InterruptedException {
        String uid = UUID.randomUUID().toString();
        Path hierarchy = GuestEnv.cgroupRoot();
        Path cgroup = qos.cgroupBelow(hierarchy, uid);
        Files.createDirectories(cgroup);
        // kubelet enables the controllers all the way down to the pod, from the top: a slice can hand
        // on only what its parent gave it
        List<Path> slices = new ArrayList<>();
        for (Path parent = cgroup.getParent(); !parent.equals(hierarchy); parent = parent.getParent()) {
            slices.addFirst(parent);
        }
        for (Path slice : slices) {
            Files.writeString(slice.resolve("cgroup.subtree_control"), "+io +memory");
        }
        // controllers on for the containers: the kernel now refuses any process in the pod cgroup itself
        Files.writeString(cgroup.resolve("cgroup.subtree_control"), "+memory");
        // the sandbox joins its container cgroup, then leaves the node's mount namespace: its copy of
        // every mount is a slave of the node's, which is what HostToContainer propagation is
        Process sandbox = new ProcessBuilder("sh", "-c", "echo $$ > \"$1\" && shift && exec \"$@\"", "pod-" + name,
                newContainer(cgroup).resolve("cgroup.procs").toString(),
                "unshare", "--mount", "--propagation", "slave", "sleep", "3600")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        DemoPod pod = new DemoPod(name, uid, qos, cgroup, sandbox);
        pod.awaitNamespace();
        return pod;
    }

    /** A container cgroup below the pod's, named as containerd under the systemd driver names it. */
    private static Path newContainer(Path podCgroup) throws IOException {
        String id = (UUID.randomUUID().toString() + UUID.randomUUID()).replace("-", "");
        return Files.createDirectory(podCgroup.resolve("cri-containerd-" + id + ".scope"));
    }

    /** Until the sandbox has exec'd sleep: then its namespace is made and its propagation set. */
    private void awaitNamespace() throws IOException, InterruptedException {
        Path comm = Path.of("/proc", Long.toString(sandbox.pid()), "comm");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!Files.readString(comm).strip().equals("sleep")) {
            if (!sandbox.isAlive() || System.nanoTime() > deadline) {
                throw new IllegalStateException("the sandbox of pod " + name + " did not start");
            }
            Thread.sleep(10);
        }
        String own = Files.readSymbolicLink(Path.of("/proc/self/ns/mnt")).toString();
        String pods = Files.readSymbolicLink(Path.of("/proc", Long.toString(sandbox.pid()), "ns", "mnt")).toString();
        if (own.equals(pods)) {
            throw new IllegalStateException("the sandbox of pod " + name + " has no mount namespace of its own");
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String uid() {
        return uid;
    }

    @Override
    public QosClass qos() {
        return qos;
    }

    Path cgroup() {
        return cgroup;
    }

    /** The cgroup's path below the hierarchy's root, as kubelet would name it. */
    @Override
    public Path cgroupName() {
        return GuestEnv.cgroupRoot().relativize(cgroup);
    }

    long sandboxPid() {
        return sandbox.pid();
    }

    /** The pod's /proc/self/mountinfo, read from inside its mount namespace. */
    @Override
    public String mountinfo() {
        return ok("nsenter", "--target", Long.toString(sandbox.pid()), "--mount", "--", "cat", "/proc/self/mountinfo");
    }

    /** The pod's mountinfo line for a mount point, if the pod sees a mount there. */
    @Override
    public Optional<String> mountinfoLine(Path mountPoint) {
        return mountinfo().lines().filter(line -> Mountinfo.mountPoint(line).equals(mountPoint.toString())).findFirst();
    }

    /** The pod cgroup's io.max, what the kernel holds for it. */
    @Override
    public String ioMax() throws IOException {
        Path file = cgroup.resolve("io.max");
        return Files.exists(file) ? Files.readString(file).strip() : "";
    }

    /**
     * Runs a command as a container of the pod: in a new container cgroup below the pod's and in
     * the pod's mount namespace. The shell joins the cgroup first and then execs nsenter, so every
     * process fio forks is the container's too. The container cgroup is removed when it ends.
     */
    @Override
    public GuestCommand.Result exec(Duration timeout, List<String> command) {
        Path container;
        try {
            container = newContainer(cgroup);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("cannot make a container cgroup below " + cgroup, e);
        }
        List<String> argv = new ArrayList<>(List.of("sh", "-c", "echo $$ > \"$1\" && shift && exec \"$@\"", "in-pod-" + name,
                container.resolve("cgroup.procs").toString(),
                "nsenter", "--target", Long.toString(sandbox.pid()), "--mount", "--"));
        argv.addAll(command);
        try {
            return GuestCommand.run(timeout, argv);
        } finally {
            try {
                rmdir(container);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** An exiting process leaves its cgroup a moment after it is reaped. */
    private static boolean rmdir(Path cgroup) throws InterruptedException {
        for (int attempt = 0; attempt < 50; attempt++) {
            if (GuestCommand.run("rmdir", cgroup.toString()).succeeded() || !Files.exists(cgroup)) {
                return true;
            }
            Thread.sleep(20);
        }
        return false;
    }

    /** Runs a command in the pod's mount namespace but outside its cgroup, at the node's full speed. */
    @Override
    public GuestCommand.Result execUnlimited(Duration timeout, List<String> command) {
        List<String> argv = new ArrayList<>(List.of("nsenter", "--target", Long.toString(sandbox.pid()), "--mount", "--"));
        argv.addAll(command);
        return GuestCommand.run(timeout, argv);
    }

    @Override
    public String runtime() {
        return "imitation";
    }

    /** The pod's namespace is a slave of the node's: the volume reaches it by propagation, nothing to start. */
    @Override
    public void volumePublished(Path target) {
    }

    @Override
    public Path inPod(Path target) {
        return target;
    }

    /** Its containers are the commands {@link #exec} runs, each gone when it ends. */
    @Override
    public void stopContainers() {
    }

    /** Ends the sandbox and removes the pod's cgroup and every slice left empty, as kubelet does. */
    @Override
    public void close() throws InterruptedException {
        sandbox.destroyForcibly();
        sandbox.waitFor(10, TimeUnit.SECONDS);
        List<Path> containers = new ArrayList<>();
        try (var entries = Files.list(cgroup)) {
            entries.filter(Files::isDirectory).forEach(containers::add);
        } catch (IOException e) {
            System.err.println("listing " + cgroup + ": " + e);
        }
        for (Path container : containers) {
            rmdir(container);
        }
        for (Path p = cgroup; p.getFileName().toString().endsWith(".slice"); p = p.getParent()) {
            boolean removed = p.equals(cgroup) ? rmdir(p)
                    : GuestCommand.run("rmdir", p.toString()).succeeded() || !Files.exists(p);
            if (!removed) {
                break; // a sibling pod is still there
            }
        }
    }
}
