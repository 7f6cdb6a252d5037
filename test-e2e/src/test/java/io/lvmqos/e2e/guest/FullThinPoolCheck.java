package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.grpc.Status;
import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Two pods write into thin volumes of a 64 MiB pool until it is out of data space. The driver's stance
 * (docs/faults.md, "A full thin pool"): NodeGetVolumeStats reports each volume abnormal, naming the pool,
 * its percentages and the lvextend that helps, and so do {@code lvmqos_volume_abnormal} and
 * {@code lvmqos_thin_pool_out_of_space}; CreateVolume into the pool answers RESOURCE_EXHAUSTED and makes
 * no LV; once the operator extends the pool, the same pods write again through the same mounts and the
 * volumes are normal. The pool is set to fail writes at once ({@code --errorwhenfull y}) so that the
 * check does not wait out dm-thin's 60 s of queueing, which the document measures.
 */
public class FullThinPoolCheck {

    private static final String ADDRESS = "127.0.0.1:9812";
    private static final String POOL = "fullpool";
    private static final Map<String, String> THIN = Map.of("lvmType", "thin", "thinPool", POOL, "overprovisionRatio", "8");

    @RegisterExtension
    static final DriverForTheClass driver = new DriverForTheClass("--metrics-address", ADDRESS);

    @Test
    void aFullPoolIsReportedRefusesNewVolumesAndResumesOnceExtended() throws Exception {
        String vg = GuestEnv.volumeGroup();
        ok("lvm", "lvcreate", "-q", "-y", "--type", "thin-pool", "-Z", "y", "-L", "64M", "-n", POOL, vg);
        ok("lvm", "lvchange", "--errorwhenfull", "y", vg + "/" + POOL);
        try (PodVolume direct = PodVolume.publish(driver.client(), "full-direct", 128 * MIB, THIN);
             PodVolume buffered = PodVolume.publish(driver.client(), "full-buffered", 128 * MIB, THIN)) {
            assertFalse(stats(direct).getAbnormal(), "normal before the pool fills");

            // 160 MiB of writes into 64 MiB: both writers fail, one with O_DIRECT, one at its fsync
            assertFalse(write(direct, "fill", 80, true).succeeded(), "a direct write past the pool's end fails");
            assertFalse(write(buffered, "fill", 80, false).succeeded(), "the fsync of a buffered write fails");
            String attr = ok("lvm", "lvs", "--noheadings", "-o", "lv_attr", vg + "/" + POOL).strip();
            assertEquals('D', attr.charAt(8), "lvm says out of data space: " + attr);

            for (PodVolume volume : List.of(direct, buffered)) {
                Csi.VolumeCondition condition = stats(volume);
                assertTrue(condition.getAbnormal(), "abnormal while the pool is full: " + condition);
                assertTrue(condition.getMessage().startsWith("thin pool " + vg + "/" + POOL + " is out of data space"),
                        condition.getMessage());
                assertTrue(condition.getMessage().contains("(data 100.00%, metadata "), condition.getMessage());
                assertTrue(condition.getMessage().endsWith("; extend the pool: lvextend -L +<size> " + vg + "/" + POOL),
                        condition.getMessage());
            }
            Map<String, String> pool = Map.of("volume_group", vg, "thin_pool", POOL);
            MetricsScrape scrape = MetricsScrape.await(ADDRESS,
                    s -> s.value("lvmqos_thin_pool_out_of_space", pool).orElse(0.0) == 1, Duration.ofSeconds(45));
            assertEquals(1, scrape.require("lvmqos_thin_pool_out_of_space", pool), scrape.text());
            assertEquals(1, scrape.require("lvmqos_volume_abnormal", Map.of("volume_id", direct.volume().getVolumeId())));

            String lvsBefore = lvNames(vg);
            var refused = Csi2.expectCode(Status.Code.RESOURCE_EXHAUSTED, () -> driver.client().controller()
                    .createVolume(Csi2.create("into-full-pool", 16 * MIB, THIN).build()));
            String why = refused.getStatus().getDescription();
            assertTrue(why.contains("thin pool " + vg + "/" + POOL + " is out of data space (data 100.00%"), why);
            assertEquals(lvsBefore, lvNames(vg), "no LV made for the refused volume");

            ok("lvm", "lvextend", "-L", "+192M", vg + "/" + POOL);
            // the same mounts, the same pods: new writes go through, and the volumes are normal again
            write(direct, "after", 16, true).requireSuccess();
            write(buffered, "after", 16, false).requireSuccess();
            for (PodVolume volume : List.of(direct, buffered)) {
                Csi.VolumeCondition condition = stats(volume);
                assertFalse(condition.getAbnormal(), "normal once the pool is extended: " + condition);
                String options = ok("findmnt", "-n", "-o", "OPTIONS", volume.target().toString());
                assertTrue(options.startsWith("rw"), "still mounted read-write: " + options);
            }
            assertEquals(0, MetricsScrape.of(ADDRESS, "").require("lvmqos_volume_abnormal",
                    Map.of("volume_id", direct.volume().getVolumeId())));
        } finally {
            GuestCommand.run("lvm", "lvremove", "-y", vg + "/" + POOL);
        }
    }

    private static Csi.VolumeCondition stats(PodVolume volume) {
        return driver.client().node().nodeGetVolumeStats(Csi.NodeGetVolumeStatsRequest.newBuilder()
                .setVolumeId(volume.volume().getVolumeId()).setVolumePath(volume.target().toString()).build())
                .getVolumeCondition();
    }

    /** dd in a new container of the volume's pod: with O_DIRECT, or buffered and then fsync'd. */
    private static GuestCommand.Result write(PodVolume volume, String file, int mebibytes, boolean direct)
            throws Exception {
        Path path = volume.target().resolve(file);
        Files.deleteIfExists(path);
        return GuestCommand.run(Duration.ofMinutes(2), volume.pod().inNewContainer(List.of("dd", "if=/dev/zero",
                "of=" + path, "bs=1M", "count=" + mebibytes, direct ? "oflag=direct" : "conv=fsync", "status=none")));
    }

    private static String lvNames(String vg) {
        return ok("lvm", "lvs", "--noheadings", "-o", "lv_name", vg);
    }
}
