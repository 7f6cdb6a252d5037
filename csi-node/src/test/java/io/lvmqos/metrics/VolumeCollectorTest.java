package io.lvmqos.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.cgroup.PodCgroups;
import io.lvmqos.lvm.LogicalVolume;
import io.lvmqos.mount.MountTable;
import io.lvmqos.volume.Limit;
import io.lvmqos.volume.ManagedVolume;
import io.lvmqos.volume.QosSpec;
import io.lvmqos.volume.VolumeId;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The per-volume collector on a fake mount table, sysfs and cgroup v2 tree. */
class VolumeCollectorTest {

    private static final String NODE = "node-1";
    private static final String LV = "vol_db_0123456789abcdef01234567";
    private static final String POD_A = "7c1d6e0a-2b2f-4d8a-9c55-1f0e2b9a7d31";
    private static final String POD_B = "0b6f3a52-9d41-4c1e-8f7a-2e5d6c7b8a90";
    private static final VolumeId ID = new VolumeId(VolumeId.Kind.VOLUME, NODE, "lvmqos", LV);

    @TempDir
    Path tmp;

    private Path kubelet;
    private Path sys;
    private Path cgroupRoot;
    private Path mountinfo;
    /** What NodeGetVolumeStats last found, by volume: absent until asked. */
    private final Map<VolumeId, Optional<Boolean>> conditionsByVolume = new HashMap<>();

    @BeforeEach
    void layOut() throws IOException {
        kubelet = Files.createDirectories(tmp.resolve("kubelet"));
        sys = tmp.resolve("sys");
        cgroupRoot = Files.createDirectories(tmp.resolve("cgroup"));
        Files.writeString(cgroupRoot.resolve("cgroup.controllers"), "cpu io memory pids\n");
        mountinfo = tmp.resolve("mountinfo");
        dm("253:3", "lvmqos-" + LV);
        dm("253:4", "other--vg-vol_x_1");
        dm("253:5", "lvmqos-vol_unknown_1");
        dm("253:6", "lvmqos-thinpool-tpool");
    }

    private void dm(String device, String name) throws IOException {
        Path dir = Files.createDirectories(sys.resolve("dev/block").resolve(device).resolve("dm"));
        Files.writeString(dir.resolve("name"), name + "\n");
    }

    private Path podCgroup(String uid) throws IOException {
        return Files.createDirectories(cgroupRoot.resolve("kubepods.slice/kubepods-burstable.slice")
                .resolve("kubepods-burstable-pod" + uid.replace('-', '_') + ".slice"));
    }

    private String publish(int id, String device, String pod, String pv) {
        return id + " 30 " + device + " / " + kubelet + "/pods/" + pod + "/volumes/kubernetes.io~csi/" + pv
                + "/mount rw,relatime shared:1 - ext4 /dev/mapper/x rw\n";
    }

    private static ManagedVolume volume(QosSpec qos) {
        LogicalVolume lv = new LogicalVolume("lvmqos", LV, 1L << 30, LogicalVolume.SegmentType.LINEAR, true, true,
                false, Optional.empty(), Map.of(), Optional.empty(), Optional.empty(), Instant.EPOCH,
                Path.of("/dev/mapper/lvmqos-" + LV), OptionalDouble.empty(), OptionalDouble.empty(), LogicalVolume.PoolHealth.OK);
        return new ManagedVolume(ID, "pvc-1", lv, 1L << 30, "", qos, Optional.empty());
    }

    private String scrape(ManagedVolume known) {
        return PrometheusTextFormatWriter.create().toDebugString(collector(known).collect());
    }

    private VolumeCollector collector(ManagedVolume known) {
        PublishedVolumes published = new PublishedVolumes(new MountTable(mountinfo), kubelet, tmp.resolve("dev"),
                new SysBlock(sys), NODE, List.of("lvmqos"), id -> {
                    return id.equals(ID) ? Optional.of(known) : Optional.empty();
                });
        return new VolumeCollector(published, new PodCgroups(cgroupRoot), new CgroupIoFiles(), id -> conditionsByVolume.getOrDefault(id, Optional.empty()));
    }

    private static int occurrences(String text, String part) {
        int count = 0;
        for (int at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + 1)) {
            count++;
        }
        return count;
    }

    private static String labels(String pod, String direction) {
        return "{device=\"253:3\",direction=\"" + direction + "\",pod_uid=\"" + pod + "\",volume_id=\"" + ID + "\"}";
    }

    @Test
    void eachPodUsingTheVolumeGetsItsLimitsItsCountersAndItsPressure() throws IOException {
        Files.writeString(mountinfo, ""
                + "25 1 98:0 / / rw - ext4 /dev/ubda rw\n"
                + "100 30 253:3 / " + kubelet + "/plugins/kubernetes.io/csi/lvmqos.csi.io/abc/globalmount rw shared:1"
                + " - ext4 /dev/mapper/x rw\n"
                + publish(101, "253:3", POD_A, "pvc-1")
                + publish(102, "253:3", POD_B, "pvc-1")
                + publish(103, "253:3", POD_A, "pvc-1") // stacked twice: counted once
                + "104 30 253:3 / /mnt/elsewhere rw - ext4 /dev/mapper/x rw\n");
        Path a = podCgroup(POD_A);
        Files.writeString(a.resolve("io.stat"), "98:0 rbytes=1 wbytes=1 rios=1 wios=1 dbytes=0 dios=0\n"
                + "253:3 rbytes=1048576 wbytes=25165824 rios=2 wios=24 dbytes=0 dios=0\n");
        Files.writeString(a.resolve("io.pressure"), "some avg10=40.00 avg60=10.00 avg300=2.00 total=5861042\n"
                + "full avg10=39.00 avg60=9.00 avg300=2.00 total=5790335\n");
        Path b = podCgroup(POD_B);
        Files.writeString(b.resolve("io.stat"), "");

        String text = scrape(volume(new QosSpec(Limit.UNLIMITED, new Limit.Fixed(4 << 20), new Limit.Fixed(100),
                Limit.UNLIMITED)));

        assertTrue(text.contains("lvmqos_volume_io_limit_bytes_per_second" + labels(POD_A, "write") + " 4194304.0\n"), text);
        assertTrue(text.contains("lvmqos_volume_io_limit_bytes_per_second" + labels(POD_B, "write") + " 4194304.0\n"), text);
        assertTrue(text.contains("lvmqos_volume_io_limit_operations_per_second" + labels(POD_A, "read") + " 100.0\n"), text);
        assertFalse(text.contains("lvmqos_volume_io_limit_bytes_per_second" + labels(POD_A, "read")),
                "no gauge for a direction without a limit: " + text);
        assertEquals(1, occurrences(text, "lvmqos_volume_io_limit_bytes_per_second" + labels(POD_A, "write")),
                "a volume mounted twice into one pod is one series: " + text);
        assertTrue(text.contains("lvmqos_volume_io_bytes_total" + labels(POD_A, "write") + " 2.5165824E7\n"), text);
        assertTrue(text.contains("lvmqos_volume_io_bytes_total" + labels(POD_A, "read") + " 1048576.0\n"), text);
        assertTrue(text.contains("lvmqos_volume_io_operations_total" + labels(POD_A, "write") + " 24.0\n"), text);
        assertTrue(text.contains("lvmqos_volume_io_bytes_total" + labels(POD_B, "write") + " 0.0\n"),
                "a pod that has not done I/O on the device yet counts zero: " + text);
        assertTrue(text.contains("lvmqos_pod_io_waiting_seconds_total{pod_uid=\"" + POD_A + "\"} 5.861042\n"), text);
        assertTrue(text.contains("lvmqos_pod_io_stalled_seconds_total{pod_uid=\"" + POD_A + "\"} 5.790335\n"), text);
        assertFalse(text.contains("pod_io_waiting_seconds_total{pod_uid=\"" + POD_B), "B has no io.pressure: " + text);
        assertTrue(text.contains("# TYPE lvmqos_volume_io_bytes_total counter\n"), text);
    }

    @Test
    void aPodWhoseCgroupIsGoneStillShowsTheLimitsButNoCounters() throws IOException {
        Files.writeString(mountinfo, publish(101, "253:3", POD_A, "pvc-1"));
        String text = scrape(volume(new QosSpec(Limit.UNLIMITED, new Limit.Fixed(4 << 20), Limit.UNLIMITED,
                Limit.UNLIMITED)));
        assertTrue(text.contains("lvmqos_volume_io_limit_bytes_per_second" + labels(POD_A, "write") + " 4194304.0\n"), text);
        assertFalse(text.contains("lvmqos_volume_io_bytes"), text);
    }

    @Test
    void mountsOfOtherDevicesGroupsAndLayersAreLeftOut() throws IOException {
        Files.writeString(mountinfo, ""
                + publish(101, "8:1", POD_A, "other-driver") // not a dm device
                + publish(102, "0:55", POD_A, "projected") // a tmpfs
                + publish(103, "253:4", POD_A, "other-vg") // an LV of a volume group we do not manage
                + publish(104, "253:5", POD_A, "unknown") // our group and naming, unknown to the catalog
                + publish(105, "253:6", POD_A, "pool-layer")); // a hidden layer
        podCgroup(POD_A);
        String text = scrape(volume(QosSpec.NONE));
        assertEquals("", text.strip());
    }

    @Test
    void anUnlimitedVolumeHasCountersButNoLimitGauges() throws IOException {
        Files.writeString(mountinfo, publish(101, "253:3", POD_A, "pvc-1"));
        Files.writeString(podCgroup(POD_A).resolve("io.stat"), "253:3 rbytes=5 wbytes=6 rios=1 wios=1\n");
        String text = scrape(volume(QosSpec.NONE));
        assertFalse(text.contains("limit"), text);
        assertTrue(text.contains("lvmqos_volume_io_bytes_total" + labels(POD_A, "write") + " 6.0\n"), text);
    }

    @Test
    void aMalformedIoStatLosesThatPodsCountersNotTheScrape() throws IOException {
        Files.writeString(mountinfo, publish(101, "253:3", POD_A, "pvc-1") + publish(102, "253:3", POD_B, "pvc-1"));
        Files.writeString(podCgroup(POD_A).resolve("io.stat"), "253:3 rbytes=oops\n");
        Files.writeString(podCgroup(POD_B).resolve("io.stat"), "253:3 rbytes=5 wbytes=6 rios=1 wios=1\n");
        String text = scrape(volume(QosSpec.NONE));
        assertFalse(text.contains(labels(POD_A, "write")), text);
        assertTrue(text.contains("lvmqos_volume_io_bytes_total" + labels(POD_B, "write") + " 6.0\n"), text);
    }

    @Test
    void anUnreadableMountTableGivesAnEmptyScrapeNotAFailure() {
        String text = scrape(volume(QosSpec.NONE)); // mountinfo was never written
        assertEquals("", text.strip());
    }

    @Test
    void aScrapeOverHttpCanAskForTheCountersOnly() throws Exception {
        Files.writeString(mountinfo, publish(101, "253:3", POD_A, "pvc-1"));
        Files.writeString(podCgroup(POD_A).resolve("io.stat"), "253:3 rbytes=5 wbytes=6 rios=1 wios=1\n");
        PrometheusRegistry registry = new PrometheusRegistry();
        registry.register(collector(volume(new QosSpec(Limit.UNLIMITED, new Limit.Fixed(4 << 20), Limit.UNLIMITED,
                Limit.UNLIMITED))));
        try (MetricsServer server = MetricsServer.serve(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                registry)) {
            String text = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                    + server.port() + "/metrics?name[]=lvmqos_volume_io_bytes_total")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            assertTrue(text.contains("lvmqos_volume_io_bytes_total" + labels(POD_A, "write") + " 6.0\n"), text);
            assertFalse(text.contains("limit") || text.contains("operations"), text);
        }
    }

    @Test
    void aVolumeIsAbnormalAsTheLastStatsFoundItAndAbsentBeforeAnyWereAsked() throws IOException {
        Files.writeString(mountinfo, publish(101, "253:3", POD_A, "pvc-1") + publish(102, "253:3", POD_B, "pvc-1"));
        podCgroup(POD_A);
        podCgroup(POD_B);
        ManagedVolume known = volume(QosSpec.NONE);

        assertFalse(scrape(known).contains("lvmqos_volume_abnormal{"), "not asked yet: no series");
        conditionsByVolume.put(ID, Optional.of(true));
        String text = scrape(known);
        assertEquals(1, occurrences(text, "lvmqos_volume_abnormal{volume_id=\"" + ID + "\"} 1.0\n"),
                "one series per volume, however many pods use it: " + text);
        conditionsByVolume.put(ID, Optional.of(false));
        assertTrue(scrape(known).contains("lvmqos_volume_abnormal{volume_id=\"" + ID + "\"} 0.0\n"));
    }
}
