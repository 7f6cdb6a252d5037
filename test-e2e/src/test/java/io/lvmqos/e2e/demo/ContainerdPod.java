package io.lvmqos.e2e.demo;

import io.lvmqos.e2e.CriClient;
import io.lvmqos.e2e.cri.Cri;
import io.lvmqos.e2e.demo.DemoPod.QosClass;
import io.lvmqos.e2e.guest.CriPods;
import io.lvmqos.e2e.guest.CriPods.Sandbox;
import io.lvmqos.e2e.guest.GuestContainerd;
import io.lvmqos.e2e.guest.GuestPods;
import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * A pod run by containerd and runc, made over CRI in kubelet's order (see {@link CriPods}): the pod
 * cgroup (cgroupfs layout) and RunPodSandbox when it is made; once its volume is published,
 * CreateContainer and StartContainer of one container of the fio image with the published path as its
 * volume mount at /data, propagation None as a volumeMount has by default. fio runs in that container
 * by ExecSync, as kubectl exec runs a command, so runc puts it in the container's cgroup.
 */
final class ContainerdPod implements PodOnNode {

    static final String CONTAINER = "fio";
    static final Path VOLUME_IN_CONTAINER = Path.of("/data");

    private final CriClient cri;
    private final String name;
    private final QosClass qos;
    private final Sandbox sandbox;
    private String containerId;

    private ContainerdPod(CriClient cri, String name, QosClass qos, Sandbox sandbox) {
        this.cri = cri;
        this.name = name;
        this.qos = qos;
        this.sandbox = sandbox;
    }

    /** Makes the pod cgroup and runs the pod's sandbox in it. */
    static ContainerdPod start(CriClient cri, String name, QosClass qos) throws IOException {
        GuestPods.QosClass criQos = switch (qos) {
            case GUARANTEED -> GuestPods.QosClass.GUARANTEED;
            case BURSTABLE -> GuestPods.QosClass.BURSTABLE;
            case BEST_EFFORT -> GuestPods.QosClass.BESTEFFORT;
        };
        return new ContainerdPod(cri, name, qos, CriPods.run(cri, name, DemoPod.NAMESPACE, criQos, false));
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String uid() {
        return sandbox.pod().uid();
    }

    @Override
    public QosClass qos() {
        return qos;
    }

    @Override
    public String runtime() {
        return "containerd+runc";
    }

    String sandboxId() {
        return sandbox.id();
    }

    @Override
    public Path cgroupName() {
        return GuestEnv.cgroupRoot().relativize(sandbox.pod().cgroup());
    }

    @Override
    public String ioMax() throws IOException {
        Path file = sandbox.pod().cgroup().resolve("io.max");
        return Files.exists(file) ? Files.readString(file).strip() : "";
    }

    @Override
    public void volumePublished(Path target) {
        containerId = CriPods.start(cri, sandbox, CriPods.container(CONTAINER, GuestContainerd.FIO_IMAGE,
                        List.of("sleep", "infinity"))
                .addMounts(Cri.Mount.newBuilder().setContainerPath(VOLUME_IN_CONTAINER.toString())
                        .setHostPath(target.toString()).setPropagation(Cri.MountPropagation.PROPAGATION_PRIVATE)));
    }

    /** The cgroup runc made for the container, as its first process's /proc/PID/cgroup names it. */
    String containerCgroup() throws IOException {
        return CriPods.cgroupOf(CriPods.pid(cri, containerId), "");
    }

    @Override
    public Path inPod(Path target) {
        return VOLUME_IN_CONTAINER;
    }

    @Override
    public Optional<String> mountinfoLine(Path target) {
        return mountinfo().lines()
                .filter(line -> Mountinfo.mountPoint(line).equals(VOLUME_IN_CONTAINER.toString())).findFirst();
    }

    @Override
    public String mountinfo() {
        if (containerId == null) {
            return "";
        }
        // read from the node: the container's /proc is its PID namespace's, where nsenter's cat has no
        // /proc/self; the kernel shows the mount points relative to the container's root all the same
        try {
            return Files.readString(Path.of("/proc", Long.toString(CriPods.pid(cri, containerId)), "mountinfo"));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Override
    public GuestCommand.Result exec(Duration timeout, List<String> command) {
        Cri.ExecSyncResponse response = CriPods.execSync(cri, containerId, timeout.toSeconds(), command);
        return new GuestCommand.Result(command, response.getExitCode(), response.getStdout().toStringUtf8(),
                response.getStderr().toStringUtf8());
    }

    /** On the node itself, where the published path is the volume. */
    @Override
    public GuestCommand.Result execUnlimited(Duration timeout, List<String> command) {
        return GuestCommand.run(timeout, command);
    }

    @Override
    public void stopContainers() {
        if (containerId != null) {
            cri.runtime().stopContainer(Cri.StopContainerRequest.newBuilder().setContainerId(containerId)
                    .setTimeout(10).build());
            cri.runtime().removeContainer(Cri.RemoveContainerRequest.newBuilder().setContainerId(containerId).build());
            containerId = null;
        }
    }

    /** Stops and removes the sandbox and the pod cgroup, as kubelet does when the pod is deleted. */
    @Override
    public void close() {
        try {
            stopContainers();
        } finally {
            CriPods.remove(cri, sandbox);
        }
    }
}
