package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.lvmqos.e2e.CsiClient;
import io.lvmqos.e2e.cri.Cri;
import io.lvmqos.e2e.guest.CriPods.Sandbox;
import io.lvmqos.e2e.guest.GuestPods.QosClass;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.GuestEnv;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The driver and a workload run by a real container runtime, as on a node: containerd's CRI plugin and
 * runc, driven over CRI in kubelet's order. The driver runs from its own image as the DaemonSet runs
 * it (privileged, its kubelet directories Bidirectional, /dev, the host's cgroup tree, the socket
 * directory, the DaemonSet's arguments); the test plays kubelet: pod cgroup, RunPodSandbox,
 * NodeStageVolume and NodePublishVolume with kubelet's paths, then CreateContainer and StartContainer
 * with the published path as the container's volume mount. runc makes the container's cgroup; the
 * limit must be there before the workload writes, and hold it.
 */
public class CriCheck {

    static final String NODE = "guest-node";
    /** The plugin's socket on the node: the DaemonSet's socket-dir host path. */
    static final Path PLUGIN_SOCKET = CriPods.KUBELET.resolve("plugins/lvmqos.csi.io/csi.sock");
    private static final long LIMIT = 4 * MIB;
    private static final int WRITTEN_MIB = 12;
    private static final Pattern DD_RATE = Pattern.compile("(\\d+) bytes .* copied, ([0-9.]+) s");

    private static final Map<String, String> DRIVER_CONTAINERS = new java.util.concurrent.ConcurrentHashMap<>();
    private static GuestContainerd containerd;
    private static Sandbox driverPod;
    private static CsiClient csi;

    @BeforeAll
    static void startNode() throws Exception {
        GuestEnv.assumeInGuest();
        prepareNode();
        containerd = GuestContainerd.start(GuestEnv.disks().get(1));
        System.out.println("runtime: " + containerd.cri().runtime().version(Cri.VersionRequest.newBuilder()
                .setVersion("v1").build()));
        driverPod = startDriver(containerd, "Bidirectional");
        csi = CsiClient.connect(PLUGIN_SOCKET);
        awaitReady(csi);
    }

    /**
     * A node's mount table as systemd leaves it: / is a shared mount, so host paths mounted
     * Bidirectional into a container propagate back (the CRI plugin refuses them otherwise). kubelet's
     * directory is on a tmpfs over /var/lib, since the guest's root is the host's, read-only.
     */
    static void prepareNode() throws Exception {
        if (GuestEnv.cgroupMode() == CgroupMode.V1) {
            // The guest's init mounts the blkio hierarchy only; a v1 node has the others too, and runc needs
            // devices (its device rules are a security boundary) and cpu (containerd gives every
            // container cpu shares; this kernel has no v1 memory controller)
            for (String controllers : List.of("devices", "cpu,cpuacct", "pids")) {
                Path hierarchy = GuestEnv.cgroupRoot().resolve(controllers);
                Files.createDirectories(hierarchy);
                ok("mount", "-t", "cgroup", "-o", controllers, controllers, hierarchy.toString());
            }
        }
        ok("mount", "--make-rshared", "/");
        ok("mount", "-t", "tmpfs", "-o", "mode=755,size=64m", "varlib", "/var/lib");
        for (String dir : List.of("pods", "plugins", "plugins_registry")) {
            Files.createDirectories(CriPods.KUBELET.resolve(dir));
        }
    }

    /** The driver's pod as the DaemonSet makes it, with the kubelet directories mounted as {@code propagation} says. */
    static Sandbox startDriver(GuestContainerd runtime, String propagation) throws Exception {
        return startDriver(runtime, propagation, PLUGIN_SOCKET);
    }

    /** As above, its socket directory on the host being {@code socket}'s (a second driver needs its own). */
    static Sandbox startDriver(GuestContainerd runtime, String propagation, Path socket) throws Exception {
        // The node's LVM configuration (the DaemonSet mounts the host's /etc/lvm): here init's, under /run.
        DaemonSetPlugin plugin = DaemonSetPlugin.read("lvmqos", Map.of("NODE_NAME", NODE),
                Map.of("/etc/lvm", "/run/lvm-system", PLUGIN_SOCKET.getParent().toString(), socket.getParent().toString()));
        Files.createDirectories(socket.getParent());
        // A second plugin on the node's network cannot have the first one's metrics port.
        List<String> args = socket.equals(PLUGIN_SOCKET) ? plugin.args() : plugin.args().stream()
                .map(arg -> arg.startsWith("--metrics-address=") ? "--metrics-address=:9811" : arg).toList();
        Sandbox pod = CriPods.run(runtime.cri(), "lvmqos-node-" + propagation.toLowerCase(), "lvmqos",
                QosClass.BURSTABLE, true);
        Cri.ContainerConfig.Builder container = Cri.ContainerConfig.newBuilder()
                .setMetadata(Cri.ContainerMetadata.newBuilder().setName("lvmqos"))
                .setImage(Cri.ImageSpec.newBuilder().setImage(GuestContainerd.DRIVER_IMAGE))
                .addAllArgs(args)
                .addEnvs(Cri.KeyValue.newBuilder().setKey("NODE_NAME")
                        .setValue(com.google.protobuf.ByteString.copyFromUtf8(NODE)));
        for (Cri.Mount mount : plugin.mounts()) {
            boolean kubelet = mount.getContainerPath().startsWith(CriPods.KUBELET.toString());
            container.addMounts(kubelet ? mount.toBuilder().setPropagation(DaemonSetPlugin.propagation(propagation)).build()
                    : mount);
        }
        container.getLinuxBuilder().getSecurityContextBuilder().setPrivileged(true);
        DRIVER_CONTAINERS.put(pod.id(), CriPods.start(runtime.cri(), pod, container));
        System.out.println("driver pod " + pod.id() + ": mounts not made here (volumes that are no host path): "
                + plugin.skippedMounts());
        try {
            CsiClient.awaitSocket(socket, Duration.ofSeconds(120));
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; its container's log:\n" + CriPods.log(pod, "lvmqos"), e);
        }
        return pod;
    }

    static void awaitReady(CsiClient client) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!client.identity().probe(Csi.ProbeRequest.getDefaultInstance()).getReady().getValue()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the driver did not become ready within 60 s");
            }
            Thread.sleep(200);
        }
    }

    @AfterAll
    static void stopNode() throws Exception {
        if (csi != null) {
            csi.close();
        }
        if (driverPod != null) {
            System.out.println("driver log:\n" + CriPods.log(driverPod, "lvmqos"));
            CriPods.remove(containerd.cri(), driverPod);
        }
        if (containerd != null) {
            containerd.close();
        }
    }

    /** kubelet's staging path: the CSI plugin's directory and the SHA-256 of the volume handle. */
    static Path stagingPath(String volumeId) throws Exception {
        byte[] digest = MessageDigest.getInstance("SHA-256").digest(volumeId.getBytes(StandardCharsets.UTF_8));
        return CriPods.KUBELET.resolve("plugins/kubernetes.io/csi/lvmqos.csi.io").resolve(HexFormat.of().formatHex(digest))
                .resolve("globalmount");
    }

    @ParameterizedTest
    @EnumSource(QosClass.class)
    void aContainerThatRuncStartsIsHeldAtItsVolumesLimitFromItsFirstWrite(QosClass qos) throws Exception {
        String pv = "pvc-" + qos.name().toLowerCase();
        Csi.Volume volume = csi.controller().createVolume(Csi2.create(pv, 64 * MIB,
                Map.of("writeBPS", Long.toString(LIMIT))).build()).getVolume();
        Path staging = stagingPath(volume.getVolumeId());
        Sandbox pod = CriPods.run(containerd.cri(), "workload-" + CriPods.qosName(qos), "default", qos, false);
        Path target = pod.volumePath(pv);
        try {
            stageAndPublish(csi, volume, staging, pod.pod().uid(), pod.config().getMetadata().getName(), target);

            // kubelet mounts a volume with the propagation of its volumeMount: None by default
            Cri.ContainerConfig.Builder workload = CriPods.container("dd", GuestContainerd.WORKLOAD_IMAGE,
                    List.of("/bin/sh", "-c", "dd if=/dev/zero of=/data/written bs=1M count=" + WRITTEN_MIB
                            + " oflag=direct 2>&1"))
                    .addMounts(Cri.Mount.newBuilder().setContainerPath("/data").setHostPath(target.toString())
                            .setPropagation(Cri.MountPropagation.PROPAGATION_PRIVATE));
            String id = CriPods.start(containerd.cri(), pod, workload);

            // StartContainer has returned: the limit is already where the container's I/O is charged
            String device = NodeCheck.deviceNumberOf(volume);
            long pid = CriPods.pid(containerd.cri(), id);
            String podCgroup = "/" + GuestPods.layout(pod.pod().uid(), qos, GuestPods.CgroupDriver.CGROUPFS, "");
            String containerCgroup = CriPods.cgroupOf(pid, GuestEnv.cgroupMode() == CgroupMode.V2 ? "" : "blkio");
            System.out.printf("cri %s %s: pod cgroup %s, runc's container cgroup %s%n", GuestEnv.cgroupMode(), qos,
                    podCgroup, containerCgroup);
            assertEquals(podCgroup + "/" + id, containerCgroup, "runc makes the container's cgroup below the pod's");
            assertTrue(limitIn(pod.pod().cgroup()).contains(device + " "), "the pod cgroup's limit: " + limitIn(pod.pod().cgroup()));

            Cri.ContainerStatus exited = CriPods.awaitExit(containerd.cri(), id, Duration.ofMinutes(2));
            String log = CriPods.log(pod, "dd");
            assertEquals(0, exited.getExitCode(), log);
            Matcher rate = DD_RATE.matcher(log);
            assertTrue(rate.find(), "dd's summary in the container log: " + log);
            double bytesPerSecond = Long.parseLong(rate.group(1)) / Double.parseDouble(rate.group(2));
            System.out.printf("cri %s %s: dd in runc's container wrote %d MiB at %.2f MiB/s under writeBPS %d MiB/s (%.1f%%)%n",
                    GuestEnv.cgroupMode(), qos, WRITTEN_MIB, bytesPerSecond / MIB, LIMIT / MIB, 100 * bytesPerSecond / LIMIT);
            assertTrue(Math.abs(bytesPerSecond - LIMIT) <= 0.10 * LIMIT,
                    "the workload's rate " + bytesPerSecond + " B/s is not within 10% of " + LIMIT);
        } finally {
            CriPods.remove(containerd.cri(), pod);
            Csi2.unpublishUnstageDelete(csi, volume.getVolumeId(), staging, List.of(target));
        }
    }

    /** NodeStageVolume and NodePublishVolume as kubelet calls them for a pod (podInfoOnMount). */
    static void stageAndPublish(CsiClient client, Csi.Volume volume, Path staging, String podUid, String podName,
                                Path target) {
        client.node().nodeStageVolume(Csi.NodeStageVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                .setStagingTargetPath(staging.toString()).setVolumeCapability(Csi2.mount())
                .putAllVolumeContext(volume.getVolumeContextMap()).build());
        client.node().nodePublishVolume(publishRequest(volume, staging, podUid, podName, target));
    }

    static Csi.NodePublishVolumeRequest publishRequest(Csi.Volume volume, Path staging, String podUid, String podName,
                                                       Path target) {
        return Csi.NodePublishVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                .setStagingTargetPath(staging.toString()).setTargetPath(target.toString())
                .setVolumeCapability(Csi2.mount()).putAllVolumeContext(volume.getVolumeContextMap())
                .putVolumeContext("csi.storage.k8s.io/pod.uid", podUid)
                .putVolumeContext("csi.storage.k8s.io/pod.name", podName)
                .putVolumeContext("csi.storage.k8s.io/pod.namespace", "default")
                .putVolumeContext("csi.storage.k8s.io/ephemeral", "false").build();
    }

    private static boolean mounted(String mountinfo, Path mountPoint) {
        return mountinfo.contains(" " + mountPoint + " ");
    }

    private static void row(StringBuilder table, String setup, String mountedBy, boolean host, boolean pod,
                            String result) {
        table.append("| ").append(setup).append(" | ").append(mountedBy).append(" | ").append(host ? "yes" : "no")
                .append(" | ").append(pod ? "yes" : "no").append(" | ").append(result).append(" |\n");
    }

    /**
     * The propagation table of docs/test-bed.md, measured: observers started before the publish with the pods
     * directory mounted None and HostToContainer; the driver's Bidirectional mount seen from the host;
     * and a container whose kubelet directory is HostToContainer only mounting there itself (what the
     * driver would do if it did not refuse), plus the driver so deployed refusing.
     */
    @org.junit.jupiter.api.Test
    void propagationAsContainerdAndRuncMakeIt() throws Exception {
        StringBuilder table = new StringBuilder("| pods directory in the container | mount made by | host sees it | pod sees it | |\n"
                + "| --- | --- | --- | --- | --- |\n");
        Sandbox observers = CriPods.run(containerd.cri(), "observers", "default", QosClass.BESTEFFORT, false);
        Csi.Volume volume = csi.controller().createVolume(Csi2.create("pvc-propagation", 32 * MIB, Map.of()).build())
                .getVolume();
        Path staging = stagingPath(volume.getVolumeId());
        String podUid = java.util.UUID.randomUUID().toString();
        Path target = CriPods.KUBELET.resolve("pods").resolve(podUid).resolve("volumes/kubernetes.io~csi/pvc-propagation/mount");
        try {
            Path pods = CriPods.KUBELET.resolve("pods");
            Map<Cri.MountPropagation, String> observer = new java.util.EnumMap<>(Cri.MountPropagation.class);
            for (Cri.MountPropagation mode : List.of(Cri.MountPropagation.PROPAGATION_PRIVATE,
                    Cri.MountPropagation.PROPAGATION_HOST_TO_CONTAINER)) {
                observer.put(mode, CriPods.start(containerd.cri(), observers, CriPods.container(
                        "observer-" + mode.getNumber(), GuestContainerd.WORKLOAD_IMAGE, List.of("sleep", "600"))
                        .addMounts(Cri.Mount.newBuilder().setContainerPath(pods.toString()).setHostPath(pods.toString())
                                .setPropagation(mode))));
            }
            // published after the observers started: only propagation can bring it to them
            stageAndPublish(csi, volume, staging, podUid, "consumer", target);
            boolean host = mounted(Files.readString(Path.of("/proc/self/mountinfo")), target);
            boolean none = mounted(CriPods.exec(containerd.cri(), observer.get(Cri.MountPropagation.PROPAGATION_PRIVATE),
                    "cat", "/proc/self/mountinfo"), target);
            boolean hostToContainer = mounted(CriPods.exec(containerd.cri(),
                    observer.get(Cri.MountPropagation.PROPAGATION_HOST_TO_CONTAINER), "cat", "/proc/self/mountinfo"), target);
            row(table, "None (PROPAGATION_PRIVATE), observer started before the publish", "the driver (Bidirectional)",
                    host, none, "the observer stays blind");
            row(table, "HostToContainer (PROPAGATION_HOST_TO_CONTAINER), observer started before the publish",
                    "the driver (Bidirectional)", host, hostToContainer, "seen without a restart");
            assertTrue(host, "Bidirectional: the driver's publish reaches the host");
            assertTrue(!none, "None: an observer started before the publish does not see it");
            assertTrue(hostToContainer, "HostToContainer: an observer started before the publish sees it");

            // the misconfiguration: the driver's kubelet directories HostToContainer only
            Path socket = Path.of("/run/misconfigured-plugin/csi.sock");
            Sandbox misconfigured = startDriver(containerd, "HostToContainer", socket);
            try (CsiClient wrong = CsiClient.connect(socket)) {
                String driverContainer = driverContainerOf(misconfigured);
                Path inside = pods.resolve(podUid).resolve("volumes/kubernetes.io~csi/pvc-void/mount");
                CriPods.exec(containerd.cri(), driverContainer, "mkdir", "-p", inside.toString());
                CriPods.exec(containerd.cri(), driverContainer, "mount", "-t", "tmpfs", "void", inside.toString());
                boolean voidOnHost = mounted(Files.readString(Path.of("/proc/self/mountinfo")), inside);
                boolean voidInside = mounted(CriPods.exec(containerd.cri(), driverContainer, "cat", "/proc/self/mountinfo"),
                        inside);
                boolean voidInPod = mounted(CriPods.exec(containerd.cri(),
                        observer.get(Cri.MountPropagation.PROPAGATION_HOST_TO_CONTAINER), "cat", "/proc/self/mountinfo"), inside);
                row(table, "the driver's kubelet directories HostToContainer only (misconfigured)",
                        "a mount in the driver's container", voidOnHost, voidInPod,
                        "stays inside the driver's container" + (voidInside ? "" : " (not even there?)"));
                assertTrue(voidInside && !voidOnHost && !voidInPod, "a HostToContainer plugin's mount stays in its container");
                CriPods.exec(containerd.cri(), driverContainer, "umount", inside.toString());

                assertTrue(!wrong.identity().probe(Csi.ProbeRequest.getDefaultInstance()).getReady().getValue(),
                        "the misconfigured driver is not ready");
                io.grpc.StatusRuntimeException refused = org.junit.jupiter.api.Assertions.assertThrows(
                        io.grpc.StatusRuntimeException.class, () -> wrong.node().nodePublishVolume(
                                publishRequest(volume, staging, podUid, "consumer", target.resolveSibling("other"))));
                assertEquals(io.grpc.Status.Code.FAILED_PRECONDITION, refused.getStatus().getCode(), refused.toString());
                assertTrue(refused.getStatus().getDescription().contains("mountPropagation: Bidirectional"),
                        refused.getStatus().getDescription());
                row(table, "the driver's kubelet directories HostToContainer only (misconfigured)", "the driver", false,
                        false, "Probe not ready; NodePublishVolume FAILED_PRECONDITION: " + refused.getStatus().getDescription());
                String log = CriPods.log(misconfigured, "lvmqos");
                assertTrue(log.contains("mountPropagation: Bidirectional"), "the driver's log says why: " + log);
            } finally {
                CriPods.remove(containerd.cri(), misconfigured);
            }
        } finally {
            System.out.println("propagation table (cgroup " + GuestEnv.cgroupMode() + "):\n" + table);
            Files.writeString(GuestEnv.outDir().resolve("propagation-table.md"), table);
            CriPods.remove(containerd.cri(), observers);
            Csi2.unpublishUnstageDelete(csi, volume.getVolumeId(), staging, List.of(target));
        }
    }

    /** The driver container of a pod made by {@link #startDriver}. */
    private static String driverContainerOf(Sandbox pod) {
        return DRIVER_CONTAINERS.get(pod.id());
    }

    static String limitIn(Path podCgroup) throws Exception {
        return GuestEnv.cgroupMode() == CgroupMode.V2 ? Files.readString(podCgroup.resolve("io.max"))
                : Files.readString(podCgroup.resolve("blkio.throttle.write_bps_device"));
    }
}
