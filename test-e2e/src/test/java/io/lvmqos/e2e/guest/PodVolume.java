package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.create;

import csi.v1.Csi;
import io.lvmqos.e2e.CsiClient;
import io.lvmqos.e2e.guest.GuestPods.Pod;
import io.lvmqos.e2e.guest.GuestPods.QosClass;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * A volume created, staged and published into a new burstable pod, the set-up of the checks that
 * scrape the metrics endpoint while the pod writes. {@link #close} undoes whatever of it was done.
 */
final class PodVolume implements AutoCloseable {

    private final CsiClient client;
    private Csi.Volume volume;
    private Path staging;
    private Path target;
    private Pod pod;

    private PodVolume(CsiClient client) {
        this.client = client;
    }

    /** Creates the volume, stages it under the name, and publishes it into a new pod; undone if a step fails. */
    static PodVolume publish(CsiClient client, String name, long bytes, Map<String, String> parameters)
            throws IOException {
        PodVolume made = new PodVolume(client);
        try {
            made.volume = client.controller().createVolume(create(name, bytes, parameters).build()).getVolume();
            Csi.VolumeCapability capability = Csi2.mount();
            made.staging = GuestDriver.KUBELET.resolve("plugins/kubernetes.io/csi/lvmqos.csi.io")
                    .resolve(name).resolve("globalmount");
            client.node().nodeStageVolume(Csi.NodeStageVolumeRequest.newBuilder()
                    .setVolumeId(made.volume.getVolumeId()).setStagingTargetPath(made.staging.toString())
                    .setVolumeCapability(capability).build());
            made.pod = GuestPods.create(QosClass.BURSTABLE);
            made.target = made.pod.volumePath("data");
            client.node().nodePublishVolume(Csi.NodePublishVolumeRequest.newBuilder()
                    .setVolumeId(made.volume.getVolumeId()).setStagingTargetPath(made.staging.toString())
                    .setTargetPath(made.target.toString()).setVolumeCapability(capability)
                    .putVolumeContext("csi.storage.k8s.io/pod.uid", made.pod.uid()).build());
            return made;
        } catch (IOException | RuntimeException e) {
            try {
                made.close();
            } catch (IOException | RuntimeException undo) {
                e.addSuppressed(undo);
            }
            throw e;
        }
    }

    Csi.Volume volume() {
        return volume;
    }

    /** Where the pod sees the volume. */
    Path target() {
        return target;
    }

    Pod pod() {
        return pod;
    }

    /** The labels of this volume's series in this pod for one direction ("read", "write"). */
    Map<String, String> labels(String direction) {
        return Map.of("volume_id", volume.getVolumeId(), "pod_uid", pod.uid(), "direction", direction);
    }

    @Override
    public void close() throws IOException {
        if (volume != null) {
            Csi2.unpublishUnstageDelete(client, volume.getVolumeId(), staging,
                    target == null ? List.of() : List.of(target));
        }
        if (pod != null) {
            GuestPods.remove(pod);
        }
    }
}
