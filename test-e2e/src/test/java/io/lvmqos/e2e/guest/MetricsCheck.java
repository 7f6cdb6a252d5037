package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.lvmqos.e2e.guest.GuestPods.Pod;
import io.lvmqos.e2e.uml.GuestEnv;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The metrics endpoint while a limited volume is busy: the driver started with
 * {@code --metrics-address}, a volume at writeBPS=4Mi published into a pod, fio writing in the
 * pod, and the endpoint scraped as Prometheus would, during the run and after it. One scrape is
 * kept in {@code metrics-scrape.txt} for docs/observability.md.
 */
public class MetricsCheck {

    private static final String ADDRESS = "127.0.0.1:9808";
    private static final long WRITE_BPS = 4L << 20;
    private static final int FIO_SECONDS = 10;

    @RegisterExtension
    static final DriverForTheClass driver = new DriverForTheClass("--metrics-address", ADDRESS);
    private static PodVolume published;
    private static Csi.Volume volume;
    private static Path target;
    private static Pod pod;
    private static Path fioLog;
    private static MetricsScrape before;
    private static MetricsScrape during;
    private static MetricsScrape later;
    private static MetricsScrape busy;
    private static MetricsScrape after;

    @BeforeAll
    static void writeThroughALimitedVolumeWhileScraping() throws Exception {
        published = PodVolume.publish(driver.client(), "metrics", 256 * MIB,
                Map.of("writeBPS", "4Mi"));
        volume = published.volume();
        target = published.target();
        pod = published.pod();
        // overwrite a laid-out file: extending writes would also count ext4's own metadata I/O
        GuestPods.layOut(target.resolve("data"), 32);

        fioLog = GuestEnv.outDir().resolve("metrics-fio");
        // also warms the scrape path in the driver and the HTTP client here, so that the timed scrapes are quick
        before = MetricsScrape.of(ADDRESS, "");
        MetricsScrape.of(ADDRESS, MetricsScrape.COUNTERS);
        // in a container cgroup made after the publish, as kubelet starts containers
        Process fio = new ProcessBuilder(pod.inNewContainer(List.of("fio", "--name=metrics",
                "--filename=" + target.resolve("data"), "--rw=write", "--bs=1M", "--size=32M", "--direct=1",
                "--ioengine=psync", "--time_based", "--runtime=" + FIO_SECONDS, "--write_bw_log=" + fioLog,
                "--log_avg_msec=250", "--log_unix_epoch=1")))
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        MetricsScrape.awaitWriting(ADDRESS, List.of(published.labels("write")), Duration.ofSeconds(30));
        TimeUnit.SECONDS.sleep(1); // past blk-throttle's first slice
        during = MetricsScrape.of(ADDRESS, MetricsScrape.COUNTERS);
        TimeUnit.SECONDS.sleep(5);
        later = MetricsScrape.of(ADDRESS, MetricsScrape.COUNTERS);
        busy = MetricsScrape.of(ADDRESS, "");
        assertTrue(fio.waitFor(60, TimeUnit.SECONDS), "fio ended");
        assertEquals(0, fio.exitValue(), "fio succeeded");
        after = MetricsScrape.await(ADDRESS, scrape -> scrape.has("lvmqos_volume_group_size_bytes"),
                Duration.ofSeconds(60));
        Files.writeString(GuestEnv.outDir().resolve("metrics-scrape.txt"), readmeExcerpt(busy));
        Files.writeString(GuestEnv.outDir().resolve("metrics-scrape-full.txt"), busy.text());
    }

    @AfterAll
    static void cleanUp() throws Exception {
        if (published != null) {
            published.close();
        }
    }

    @Test
    void theConfiguredWriteLimitIsServedForTheVolumeInThePod() throws IOException {
        for (MetricsScrape scrape : List.of(before, busy, after)) {
            assertEquals(WRITE_BPS, scrape.require("lvmqos_volume_io_limit_bytes_per_second", published.labels("write")));
            assertTrue(scrape.value("lvmqos_volume_io_limit_bytes_per_second", published.labels("read")).isEmpty(),
                    "no gauge where there is no limit:\n" + scrape.text());
        }
        String device = deviceMountedAt(target);
        assertTrue(after.value("lvmqos_volume_io_limit_bytes_per_second",
                Map.of("volume_id", volume.getVolumeId(), "pod_uid", pod.uid(), "device", device)).isPresent(),
                "the device label is the volume's MAJ:MIN " + device + ":\n" + after.text());
    }

    @Test
    void thePodsCountersStartAtZeroWhateverElseWroteOnTheDevice() {
        // the file was laid out from outside the pod's cgroup: that I/O is not the pod's
        assertEquals(0, before.require("lvmqos_volume_io_bytes_total", published.labels("write")), before.text());
        assertEquals(0, before.require("lvmqos_volume_io_operations_total", published.labels("write")), before.text());
    }

    @Test
    void theWrittenBytesRiseAtTheLimitWhileFioRuns() {
        double bytes = later.require("lvmqos_volume_io_bytes_total", published.labels("write"))
                - during.require("lvmqos_volume_io_bytes_total", published.labels("write"));
        double seconds = (later.atNanos() - during.atNanos()) / 1e9;
        double rate = bytes / seconds;
        String measured = String.format("%.0f bytes written in %.3f s between two scrapes (which took %.3f s and"
                + " %.3f s): %.3f MiB/s; fio's own log over that time: %.3f MiB/s", bytes, seconds,
                during.tookNanos() / 1e9, later.tookNanos() / 1e9, rate / MIB, fioMiB(during.atMillis(), later.atMillis()));
        System.out.println("metrics: " + measured);
        assertTrue(Math.abs(rate - WRITE_BPS) <= 0.15 * WRITE_BPS, measured + ", expected 4 MiB/s within 15%");
        assertTrue(later.require("lvmqos_volume_io_operations_total", published.labels("write"))
                > during.require("lvmqos_volume_io_operations_total", published.labels("write")), "the write count rose");
        assertTrue(after.require("lvmqos_volume_io_bytes_total", published.labels("write"))
                >= later.require("lvmqos_volume_io_bytes_total", published.labels("write")), "a counter never falls");
    }

    @Test
    void ioPressureIsServedAndRisesWhileThePodIsThrottled() {
        Map<String, String> ofPod = Map.of("pod_uid", pod.uid());
        if (!Files.exists(Path.of("/proc/pressure/io"))) {
            assertFalse(after.has("lvmqos_pod_io_waiting_seconds_total"), "no pressure is invented:\n" + after.text());
            Assumptions.abort("this kernel has no pressure stall information (CONFIG_PSI), so no io.pressure:"
                    + " the pressure metrics are absent, as they should be");
        }
        double waitingBefore = before.require("lvmqos_pod_io_waiting_seconds_total", ofPod);
        double waitingBusy = busy.require("lvmqos_pod_io_waiting_seconds_total", ofPod);
        assertTrue(waitingBusy > waitingBefore, "the pod's writer waits on the throttle: " + waitingBefore
                + " s, then " + waitingBusy + " s");
        assertTrue(after.value("lvmqos_pod_io_stalled_seconds_total", ofPod).isPresent(), after.text());
    }

    @Test
    void theRpcHistogramCountsThePublish() {
        assertTrue(after.require("lvmqos_rpc_duration_seconds_count", Map.of("method", "NodePublishVolume")) >= 1);
        assertTrue(after.require("lvmqos_rpc_duration_seconds_bucket", Map.of("method", "CreateVolume", "le", "+Inf"))
                >= 1);
    }

    @Test
    void volumeGroupAndThinPoolGaugesAreServed() {
        Map<String, String> group = Map.of("volume_group", GuestEnv.volumeGroup());
        double size = after.require("lvmqos_volume_group_size_bytes", group);
        double free = after.require("lvmqos_volume_group_free_bytes", group);
        assertTrue(size > 0 && free >= 0 && free < size, "size " + size + ", free " + free);
        Optional<String> pool = GuestEnv.thinPool();
        Assumptions.assumeTrue(pool.isPresent(), "the guest has no thin pool");
        Map<String, String> ofPool = Map.of("volume_group", GuestEnv.volumeGroup(), "thin_pool", pool.get());
        assertTrue(after.require("lvmqos_thin_pool_size_bytes", ofPool) > 0);
        double data = after.require("lvmqos_thin_pool_data_used_ratio", ofPool);
        double metadata = after.require("lvmqos_thin_pool_metadata_used_ratio", ofPool);
        assertTrue(data >= 0 && data <= 1 && metadata > 0 && metadata <= 1, "data " + data + ", metadata " + metadata);
        assertTrue(after.require("lvmqos_lvm_report_timestamp_seconds", Map.of()) > 1.7e9);
    }

    /** Mean of fio's bandwidth log samples (KiB/s, every 250 ms, epoch ms) in [from, to). */
    private static double fioMiB(long fromMillis, long toMillis) {
        try {
            return Files.readAllLines(Path.of(fioLog + "_bw.1.log")).stream().map(line -> line.split(",\\s*"))
                    .filter(f -> Long.parseLong(f[0]) >= fromMillis && Long.parseLong(f[0]) < toMillis)
                    .mapToDouble(f -> Double.parseDouble(f[1]) / 1024).average().orElse(Double.NaN);
        } catch (IOException e) {
            return Double.NaN;
        }
    }

    /** The families an operator looks at for this volume, its pod, the RPCs and the volume groups. */
    private static String readmeExcerpt(MetricsScrape scrape) {
        Set<String> keptFamilies = new LinkedHashSet<>();
        List<String> kept = new ArrayList<>();
        for (String line : scrape.text().split("\n")) {
            if (line.startsWith("#") || line.isBlank()) {
                continue;
            }
            String name = line.split("[{ ]", 2)[0];
            boolean ours = line.contains(volume.getVolumeId()) || line.contains("pod_uid=\"" + pod.uid() + "\"");
            if (name.startsWith("lvmqos_rpc_") || name.startsWith("lvmqos_volume_group_")
                    || name.startsWith("lvmqos_thin_pool_") || name.startsWith("lvmqos_lvm_")
                    || (name.startsWith("lvmqos_") && ours)) {
                kept.add(line);
                keptFamilies.add(family(name));
            }
        }
        StringBuilder out = new StringBuilder();
        for (String line : scrape.text().split("\n")) {
            if (line.startsWith("# HELP ") || line.startsWith("# TYPE ")) {
                String family = line.split(" ")[2];
                if (keptFamilies.contains(family)) {
                    out.append(line).append('\n');
                }
            } else if (kept.contains(line)) {
                out.append(line).append('\n');
            }
        }
        return out.toString();
    }

    private static String family(String sampleName) {
        for (String suffix : List.of("_bucket", "_count", "_sum")) {
            if (sampleName.startsWith("lvmqos_rpc_duration_seconds") && sampleName.endsWith(suffix)) {
                return sampleName.substring(0, sampleName.length() - suffix.length());
            }
        }
        return sampleName;
    }

    /** MAJ:MIN of the filesystem mounted at {@code path}, from this process's mountinfo. */
    private static String deviceMountedAt(Path path) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
            String[] fields = line.split(" ");
            if (fields[4].equals(path.toString())) {
                return fields[2];
            }
        }
        throw new AssertionError(path + " is not mounted");
    }
}
