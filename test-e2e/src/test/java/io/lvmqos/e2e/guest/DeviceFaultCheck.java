package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.guest.Csi2.create;
import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.lvmqos.e2e.uml.GuestEnv;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A published volume whose disk starts failing every I/O (its device-mapper table swapped for
 * dm-flakey, always down): NodeGetVolumeStats reports it abnormal, although statfs and the page cache
 * still look fine, and so does the metric {@code lvmqos_volume_abnormal}; the pod can still be torn
 * down: unpublish and unstage succeed.
 */
public class DeviceFaultCheck {

    private static final int METRICS_PORT = 9811;
    @RegisterExtension
    static final DriverForTheClass driver = new DriverForTheClass("--metrics-address", "127.0.0.1:" + METRICS_PORT);

    @Test
    void aFailingDiskIsReportedAbnormalAndStillTornDown() throws Exception {
        Csi.Volume volume = driver.client().controller().createVolume(create("failing-disk", 64 * MIB, Map.of()).build())
                .getVolume();
        String lv = volume.getVolumeId().substring(volume.getVolumeId().lastIndexOf('/') + 1);
        String dmName = GuestEnv.volumeGroup() + "-" + lv; // neither name holds a '-' that dm would double
        Path staging = GuestDriver.KUBELET.resolve("plugins/kubernetes.io/csi/lvmqos.csi.io/failing/globalmount");
        Path target = GuestDriver.KUBELET.resolve("pods").resolve(UUID.randomUUID().toString())
                .resolve("volumes/kubernetes.io~csi/pv-failing/mount");
        var node = driver.client().node();
        node.nodeStageVolume(Csi.NodeStageVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                .setStagingTargetPath(staging.toString()).setVolumeCapability(Csi2.mount()).build());
        node.nodePublishVolume(Csi.NodePublishVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                .setStagingTargetPath(staging.toString()).setTargetPath(target.toString())
                .setVolumeCapability(Csi2.mount()).build());
        Files.writeString(target.resolve("data"), "written before the disk failed\n");
        ok("sync");
        Csi.NodeGetVolumeStatsRequest stats = Csi.NodeGetVolumeStatsRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).setVolumePath(target.toString()).build();
        assertFalse(node.nodeGetVolumeStats(stats).getVolumeCondition().getAbnormal(), "healthy before the fault");
        String series = "lvmqos_volume_abnormal{volume_id=\"" + volume.getVolumeId() + "\"} ";
        assertTrue(scrape().contains(series + "0.0"), "the metric says healthy too:\n" + scrape());

        String linear = ok("dmsetup", "table", dmName).strip();
        String[] table = linear.split("\\s+"); // 0 <sectors> linear <major:minor> <offset>
        assertTrue(table.length == 5 && table[2].equals("linear"), linear);
        swapTable(dmName, "0 " + table[1] + " flakey " + table[3] + " " + table[4] + " 0 3600");
        try {
            Csi.VolumeCondition condition = node.nodeGetVolumeStats(stats).getVolumeCondition();
            assertTrue(condition.getAbnormal(), "a disk that fails every read is abnormal: " + condition);
            assertTrue(condition.getMessage().contains("reading the device"), condition.getMessage());
            assertTrue(scrape().contains(series + "1.0"), "the metric says abnormal:\n" + scrape());

            node.nodeUnpublishVolume(Csi.NodeUnpublishVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                    .setTargetPath(target.toString()).build());
            node.nodeUnstageVolume(Csi.NodeUnstageVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                    .setStagingTargetPath(staging.toString()).build());
            String mounts = Files.readString(Path.of("/proc/self/mountinfo"));
            assertFalse(mounts.contains(target.toString()) || mounts.contains(staging.toString()),
                    "torn down although the disk fails:\n" + mounts);
        } finally {
            swapTable(dmName, linear);
        }
        driver.client().controller().deleteVolume(Csi.DeleteVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).build());
    }

    private static String scrape() throws Exception {
        try (HttpClient http = HttpClient.newHttpClient()) {
            return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + METRICS_PORT + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
        }
    }

    private static void swapTable(String dmName, String table) {
        ok("dmsetup", "suspend", "--noflush", dmName);
        ok("dmsetup", "load", dmName, "--table", table);
        ok("dmsetup", "resume", dmName);
    }
}
