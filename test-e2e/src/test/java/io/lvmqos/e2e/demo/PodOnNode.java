package io.lvmqos.e2e.demo;

import io.lvmqos.e2e.demo.DemoPod.QosClass;
import io.lvmqos.e2e.guest.GuestDriver;
import io.lvmqos.e2e.uml.GuestCommand;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * A pod of the demo, whoever runs it: containerd and runc over CRI ({@link ContainerdPod}) or the test
 * bed's imitation of kubelet ({@link DemoPod}). The demo plays kubelet's steps on it in order: the pod
 * is made, its volume published, {@link #volumePublished}, commands run as its containers, then
 * {@link #stopContainers} before the unpublish, and {@link #close}.
 */
interface PodOnNode extends AutoCloseable {

    String name();

    String uid();

    QosClass qos();

    /** Who runs the pod, for the table: "containerd+runc" or "imitation". */
    String runtime();

    /** The pod cgroup's path below the hierarchy's root. */
    Path cgroupName();

    /** The pod cgroup's io.max, what the kernel holds for it. */
    String ioMax() throws IOException;

    /** Where kubelet asks for a CSI volume of this pod to be published. */
    default Path volumePath(String pvName) {
        return GuestDriver.KUBELET.resolve("pods").resolve(uid()).resolve("volumes/kubernetes.io~csi")
                .resolve(pvName).resolve("mount");
    }

    /** Kubelet's next step once the volume is published at {@code target}: for a real pod, its container starts. */
    void volumePublished(Path target) throws IOException;

    /** Where a command run in the pod finds the volume published at {@code target}. */
    Path inPod(Path target);

    /** The pod's mountinfo line for its view of the volume published at {@code target}, if it sees it. */
    Optional<String> mountinfoLine(Path target);

    /** Every mount the pod's containers see, as mountinfo lines; empty when none is running. */
    String mountinfo();

    /** Runs a command as a container of the pod: its I/O charged below the pod cgroup. */
    GuestCommand.Result exec(Duration timeout, List<String> command);

    /** Runs a command on the volume from outside the pod's cgroup, at the node's full speed. */
    GuestCommand.Result execUnlimited(Duration timeout, List<String> command);

    /** Kubelet stops a pod's containers before it unpublishes its volumes. */
    void stopContainers();

    @Override
    void close() throws Exception;
}
