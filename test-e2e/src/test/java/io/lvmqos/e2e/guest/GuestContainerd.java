package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.uml.GuestCommand.ok;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lvmqos.e2e.CriClient;
import io.lvmqos.e2e.CsiClient;
import io.lvmqos.e2e.ProjectVersion;
import io.lvmqos.e2e.cri.Cri;
import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Debian 12's containerd (1.6) with its CRI plugin, running in the guest as a node's runtime runs under
 * kubelet: runc through the runc v2 shim, the cgroupfs driver (SystemdCgroup false) or, on a node whose
 * init is systemd, the systemd driver as a systemd service of its own ({@link #startUnderSystemd}), the project's own
 * pause image as the sandbox image, and no CNI (the check's pods use the node's network). Its state is
 * on /run (tmpfs), its images and snapshots on an ext4 file system of a disk of their own; the images
 * are the OCI archives scripts/build-image made, imported with ctr, never pulled.
 */
public final class GuestContainerd implements AutoCloseable {

    /** Where scripts/build-image left the OCI archives (the host sets it; the guest sees the host's files). */
    static final String IMAGE_DIR_VARIABLE = "LVMQOS_IMAGE_DIR";
    static final Path HOME = Path.of("/run/containerd-test");
    static final Path SOCKET = HOME.resolve("containerd.sock");
    /** scripts/build-image tags its images with the project's version. */
    public static final String TAG = ProjectVersion.get();
    public static final String DRIVER_IMAGE = "docker.io/library/lvmqos:" + TAG;
    public static final String PAUSE_IMAGE = "docker.io/library/lvmqos-pause:" + TAG;
    public static final String WORKLOAD_IMAGE = "docker.io/library/lvmqos-workload:" + TAG;
    public static final String FIO_IMAGE = "docker.io/library/lvmqos-fio:" + TAG;
    /** Pod logs: kubelet's /var/log/pods is on the guest's read-only root. */
    static final Path POD_LOGS = HOME.resolve("pods");

    /** The systemd service containerd runs as on a node whose init is systemd. */
    static final String UNIT = "lvmqos-containerd.service";

    /** Its process, when this check started it; none when systemd runs it. */
    private final Process process;
    private CriClient client;
    /**
     * The snapshotters: native (a full copy of the image per container, needs nothing) in the UML
     * node; overlayfs where overlay.ko is loaded (the systemd node, whose root is an overlay), which
     * spares the emulated CPU a copy of fio's image for every container.
     */
    private static final String NATIVE = "native";
    private static final String OVERLAYFS = "overlayfs";

    private GuestContainerd(Process process, CriClient client) {
        this.process = process;
        this.client = client;
    }

    /** Starts containerd with its content and snapshots on {@code disk} (made ext4 here) and imports the checks' images. */
    public static GuestContainerd start(Path disk) throws Exception {
        return start(disk, List.of("lvmqos.oci.tar", DRIVER_IMAGE, "workload.oci.tar", WORKLOAD_IMAGE));
    }

    /** As {@link #start(Path)}, with the sandbox image and fio's only: the demo's driver is a process of the node. */
    public static GuestContainerd startForFio(Path disk) throws Exception {
        return start(disk, List.of("fio.oci.tar", FIO_IMAGE));
    }

    /**
     * containerd as a node whose init is systemd runs it: a service with Debian's containerd.service
     * settings that matter here (Type=notify, Delegate=yes, KillMode=process: a restart leaves the
     * shims and their containers running), runc told to use the systemd cgroup driver (SystemdCgroup
     * true: each container a {@code cri-containerd-<id>.scope} that runc asks systemd for over D-Bus,
     * below the pod's slice), with fio's image beside the sandbox's.
     */
    public static GuestContainerd startUnderSystemd(Path disk) throws Exception {
        Path config = prepare(disk, true, OVERLAYFS);
        SystemdUnits.writeUnit(UNIT, """
                [Unit]
                Description=containerd, as Debian's containerd.service runs it, with the test node's configuration
                [Service]
                ExecStart=/usr/bin/containerd --config %s
                Type=notify
                Delegate=yes
                KillMode=process
                StandardOutput=append:%s
                StandardError=inherit
                """.formatted(config, GuestEnv.outDir().resolve("containerd.log")));
        ok("systemctl", "start", UNIT);
        return imported(null, List.of("fio.oci.tar", FIO_IMAGE), OVERLAYFS);
    }

    /** {@code images}: archive, image name, archive, image name...; the pause image is always imported. */
    private static GuestContainerd start(Path disk, List<String> images) throws Exception {
        Path config = prepare(disk, false, NATIVE);
        Process process = new ProcessBuilder("/usr/bin/containerd", "--config", config.toString())
                .redirectErrorStream(true)
                .redirectOutput(GuestEnv.outDir().resolve("containerd.log").toFile())
                .start();
        return imported(process, images, NATIVE);
    }

    /** The file system for containerd's content and its configuration; returns the configuration's path. */
    private static Path prepare(Path disk, boolean systemdCgroup, String snapshotter) throws IOException {
        Path root = HOME.resolve("root");
        Files.createDirectories(root);
        Files.createDirectories(POD_LOGS);
        ok("mkfs.ext4", "-q", "-F", disk.toString());
        ok("mount", disk.toString(), root.toString());
        Path config = HOME.resolve("config.toml");
        Files.writeString(config, config(root, systemdCgroup, snapshotter));
        return config;
    }

    private static GuestContainerd imported(Process process, List<String> images, String snapshotter) throws Exception {
        CsiClient.awaitSocket(SOCKET, Duration.ofSeconds(60));
        Path imageDir = Path.of(System.getenv(IMAGE_DIR_VARIABLE));
        importImage(imageDir.resolve("pause.oci.tar"), PAUSE_IMAGE, snapshotter);
        for (int i = 0; i < images.size(); i += 2) {
            importImage(imageDir.resolve(images.get(i)), images.get(i + 1), snapshotter);
        }
        return new GuestContainerd(process, CriClient.connect(SOCKET));
    }

    /**
     * {@code systemctl restart} of containerd run by systemd: the shims and containers live on
     * (KillMode=process); a new CRI connection once its socket is back.
     */
    public void restartUnderSystemd() throws Exception {
        if (process != null) {
            throw new IllegalStateException("containerd was started by the check, not by systemd");
        }
        client.close();
        ok("systemctl", "restart", UNIT);
        CsiClient.awaitSocket(SOCKET, Duration.ofSeconds(60));
        client = CriClient.connect(SOCKET);
        awaitCriServing(Duration.ofSeconds(60));
    }

    /**
     * The CRI plugin answers "server is not initialized yet" (UNKNOWN) for a while after the socket
     * is back, until it has reloaded its sandboxes and containers: asked for a container that does
     * not exist, it answers NOT_FOUND once it serves.
     */
    private void awaitCriServing(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            try {
                client.runtime().containerStatus(Cri.ContainerStatusRequest.newBuilder()
                        .setContainerId("no-such-container").build());
                return;
            } catch (StatusRuntimeException e) {
                if (e.getStatus().getCode() == Status.Code.NOT_FOUND) {
                    return;
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("containerd's CRI plugin does not serve " + timeout.toSeconds()
                            + " s after its restart: " + e.getStatus(), e);
                }
            }
            Thread.sleep(200);
        }
    }

    /** ctr names an archive's image base-name:tag, the tag being the archive's ref.name ({@link #TAG}). */
    private static void importImage(Path archive, String name, String snapshotter) {
        String baseName = name.substring(0, name.lastIndexOf(':'));
        GuestCommand.run(Duration.ofMinutes(5), List.of("ctr", "--address", SOCKET.toString(), "--namespace", "k8s.io",
                "images", "import", "--snapshotter", snapshotter, "--base-name", baseName, archive.toString()))
                .requireSuccess();
        String listed = ok("ctr", "--address", SOCKET.toString(), "--namespace", "k8s.io", "images", "ls", "-q");
        if (!listed.lines().toList().contains(name)) {
            throw new AssertionError("importing " + archive + " made no image " + name + "; containerd has: " + listed);
        }
    }

    private static String config(Path root, boolean systemdCgroup, String snapshotter) throws IOException {
        Path cni = HOME.resolve("cni");
        Files.createDirectories(cni.resolve("bin"));
        Files.createDirectories(cni.resolve("conf"));
        return """
                version = 2
                root = "%s"
                state = "%s"
                # Snapshotters this kernel or this root file system cannot serve: not loaded, not logged.
                disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
                  "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.devmapper"]

                [grpc]
                  address = "%s"

                [plugins."io.containerd.grpc.v1.cri"]
                  sandbox_image = "%s"
                  stream_server_address = "127.0.0.1"
                  stream_server_port = "0"
                  enable_selinux = false
                  disable_apparmor = true
                  [plugins."io.containerd.grpc.v1.cri".containerd]
                    snapshotter = "%s"
                    default_runtime_name = "runc"
                    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
                      runtime_type = "io.containerd.runc.v2"
                      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
                        SystemdCgroup = %s
                  # the guest's /etc/cni is read-only; no network plugin is configured there
                  [plugins."io.containerd.grpc.v1.cri".cni]
                    bin_dir = "%s"
                    conf_dir = "%s"
                """.formatted(root, HOME.resolve("state"), SOCKET, PAUSE_IMAGE, snapshotter, systemdCgroup, cni.resolve("bin"),
                cni.resolve("conf"));
    }

    public CriClient cri() {
        return client;
    }

    @Override
    public void close() throws Exception {
        client.close();
        if (process != null) {
            process.destroy();
            process.waitFor();
        } else {
            ok("systemctl", "stop", UNIT);
        }
    }
}
