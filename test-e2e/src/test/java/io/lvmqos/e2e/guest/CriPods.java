package io.lvmqos.e2e.guest;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.lvmqos.e2e.CriClient;
import io.lvmqos.e2e.cri.Cri;
import io.lvmqos.e2e.guest.GuestPods.CgroupDriver;
import io.lvmqos.e2e.guest.GuestPods.Pod;
import io.lvmqos.e2e.guest.GuestPods.QosClass;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.UUID;

/**
 * Pods made over CRI in kubelet's order and with kubelet's values: the pod cgroup first (kubelet's pod
 * container manager, cgroupfs layout), then RunPodSandbox with that cgroup as cgroup_parent, the pod's UID
 * and kubelet's labels, on the node's network; containers are created in the sandbox later, after the
 * volumes are published.
 */
public final class CriPods {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** A sandbox running in containerd, and the pod cgroup kubelet made for it. */
    public record Sandbox(String id, Pod pod, Cri.PodSandboxConfig config) {
        /** The target path kubelet gives NodePublishVolume for a volume of this pod. */
        Path volumePath(String pvName) {
            return KUBELET.resolve("pods").resolve(pod.uid()).resolve("volumes/kubernetes.io~csi").resolve(pvName)
                    .resolve("mount");
        }
    }

    static final Path KUBELET = Path.of("/var/lib/kubelet");

    private CriPods() {
    }

    public static Sandbox run(CriClient cri, String name, String namespace, QosClass qos, boolean privileged) throws IOException {
        String uid = UUID.randomUUID().toString();
        Pod pod = GuestPods.create(uid, qos, CgroupDriver.CGROUPFS, "");
        return run(cri, name, namespace, pod, "/" + GuestPods.layout(uid, qos, CgroupDriver.CGROUPFS, ""), privileged);
    }

    /**
     * RunPodSandbox for a pod whose cgroup the caller made, with kubelet's {@code cgroup_parent} for
     * it: the cgroupfs path, or under the systemd driver the pod slice's unit name
     * ({@code kubepods-burstable-pod<uid>.slice}), which runc expands to the path of its slices.
     */
    public static Sandbox run(CriClient cri, String name, String namespace, Pod pod, String cgroupParent,
                              boolean privileged) throws IOException {
        String uid = pod.uid();
        Path logs = GuestContainerd.POD_LOGS.resolve(namespace + "_" + name + "_" + uid);
        Files.createDirectories(logs);
        Cri.NamespaceOption hostNetwork = Cri.NamespaceOption.newBuilder().setNetwork(Cri.NamespaceMode.NODE)
                .setPid(Cri.NamespaceMode.CONTAINER).setIpc(Cri.NamespaceMode.POD).build();
        Cri.PodSandboxConfig config = Cri.PodSandboxConfig.newBuilder()
                .setMetadata(Cri.PodSandboxMetadata.newBuilder().setName(name).setUid(uid).setNamespace(namespace))
                .setLogDirectory(logs.toString())
                .putLabels("io.kubernetes.pod.name", name)
                .putLabels("io.kubernetes.pod.namespace", namespace)
                .putLabels("io.kubernetes.pod.uid", uid)
                .setLinux(Cri.LinuxPodSandboxConfig.newBuilder()
                        .setCgroupParent(cgroupParent)
                        .setSecurityContext(Cri.LinuxSandboxSecurityContext.newBuilder()
                                .setNamespaceOptions(hostNetwork).setPrivileged(privileged)))
                .build();
        String id = cri.runtime().runPodSandbox(Cri.RunPodSandboxRequest.newBuilder().setConfig(config).build())
                .getPodSandboxId();
        return new Sandbox(id, pod, config);
    }

    /** CreateContainer and StartContainer, as kubelet starts a container of the pod. */
    public static String start(CriClient cri, Sandbox sandbox, Cri.ContainerConfig.Builder container) {
        String name = container.getMetadata().getName();
        container.setLogPath(name + "/0.log")
                .putLabels("io.kubernetes.container.name", name)
                .putLabels("io.kubernetes.pod.name", sandbox.config().getMetadata().getName())
                .putLabels("io.kubernetes.pod.namespace", sandbox.config().getMetadata().getNamespace())
                .putLabels("io.kubernetes.pod.uid", sandbox.pod().uid());
        Cri.LinuxContainerSecurityContext.Builder security = container.getLinuxBuilder().getSecurityContextBuilder();
        security.setNamespaceOptions(sandbox.config().getLinux().getSecurityContext().getNamespaceOptions());
        String id = cri.runtime().createContainer(Cri.CreateContainerRequest.newBuilder()
                .setPodSandboxId(sandbox.id()).setConfig(container).setSandboxConfig(sandbox.config()).build())
                .getContainerId();
        cri.runtime().startContainer(Cri.StartContainerRequest.newBuilder().setContainerId(id).build());
        return id;
    }

    public static Cri.ContainerConfig.Builder container(String name, String image, List<String> command) {
        return Cri.ContainerConfig.newBuilder()
                .setMetadata(Cri.ContainerMetadata.newBuilder().setName(name))
                .setImage(Cri.ImageSpec.newBuilder().setImage(image))
                .addAllCommand(command);
    }

    /** The container's first process, as containerd reports it. */
    public static long pid(CriClient cri, String containerId) throws IOException {
        Cri.ContainerStatusResponse status = cri.runtime().containerStatus(Cri.ContainerStatusRequest.newBuilder()
                .setContainerId(containerId).setVerbose(true).build());
        return JSON.readTree(status.getInfoOrThrow("info")).path("pid").asLong();
    }

    /** The cgroup of a process, as /proc/<pid>/cgroup names it in the hierarchy the driver writes. */
    public static String cgroupOf(long pid, String controller) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "cgroup"))) {
            String[] fields = line.split(":", 3);
            if (controller.isEmpty() ? fields[0].equals("0") : List.of(fields[1].split(",")).contains(controller)) {
                return fields[2];
            }
        }
        throw new AssertionError("process " + pid + " is in no " + (controller.isEmpty() ? "v2" : controller) + " cgroup");
    }

    static Cri.ContainerStatus awaitExit(CriClient cri, String containerId, java.time.Duration timeout)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Cri.ContainerStatus status = cri.runtime().containerStatus(Cri.ContainerStatusRequest.newBuilder()
                    .setContainerId(containerId).build()).getStatus();
            if (status.getState() == Cri.ContainerState.CONTAINER_EXITED) {
                return status;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("container " + containerId + " still " + status.getState() + " after " + timeout);
            }
            Thread.sleep(200);
        }
    }

    /** Runs a command in a running container (kubelet's exec probes and kubectl exec go this way). */
    static String exec(CriClient cri, String containerId, String... command) {
        Cri.ExecSyncResponse response = execSync(cri, containerId, 60, List.of(command));
        if (response.getExitCode() != 0) {
            throw new AssertionError(String.join(" ", command) + " in " + containerId + " exited with "
                    + response.getExitCode() + ": " + response.getStderr().toStringUtf8());
        }
        return response.getStdout().toStringUtf8();
    }

    /** ExecSync, whatever the command's exit code; the command ends after {@code timeoutSeconds}. */
    public static Cri.ExecSyncResponse execSync(CriClient cri, String containerId, long timeoutSeconds, List<String> command) {
        return cri.runtime().execSync(Cri.ExecSyncRequest.newBuilder()
                .setContainerId(containerId).addAllCmd(command).setTimeout(timeoutSeconds).build());
    }

    /** The container's log as containerd wrote it (CRI log format: time, stream, tag, text). */
    static String log(Sandbox sandbox, String containerName) throws IOException {
        Path log = Path.of(sandbox.config().getLogDirectory(), containerName, "0.log");
        return Files.exists(log) ? Files.readString(log) : "";
    }

    /** Stops and removes the sandbox with its containers, then kubelet's pod cgroup. */
    public static void remove(CriClient cri, Sandbox sandbox) {
        try {
            cri.runtime().stopPodSandbox(Cri.StopPodSandboxRequest.newBuilder().setPodSandboxId(sandbox.id()).build());
            cri.runtime().removePodSandbox(Cri.RemovePodSandboxRequest.newBuilder().setPodSandboxId(sandbox.id()).build());
        } finally {
            GuestPods.remove(sandbox.pod());
        }
    }

    static String qosName(QosClass qos) {
        return qos.name().toLowerCase(Locale.ROOT);
    }
}
