package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.guest.Csi2.expectCode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.grpc.Status;
import io.lvmqos.e2e.deploy.DashboardQueries;
import io.lvmqos.e2e.deploy.DashboardQueries.Query;
import io.lvmqos.e2e.guest.GuestPods.Pod;
import io.lvmqos.e2e.uml.GuestEnv;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The Grafana dashboard against a real scrape, and the data of the picture in
 * docs/observability.md. A pod writes through a volume limited to writeBPS=4Mi; while it writes,
 * the endpoint is scraped every 250 ms and, halfway, ControllerModifyVolume raises the limit to 8Mi. One full scrape taken during the
 * I/O must serve every metric name and label the dashboard's queries use. The series (limit and
 * written bytes per scrape) and fio's bandwidth log (1 s means) are kept in the run's out directory, where
 * scripts/plot-limit-change.sh renders them; dashboard-change.txt holds the call's start and reply
 * (epoch ms).
 */
public class DashboardCheck {

    private static final String ADDRESS = "127.0.0.1:9811";
    private static final String SERIES_QUERY =
            "?name[]=lvmqos_volume_io_bytes_total&name[]=lvmqos_volume_io_limit_bytes_per_second";
    private static final int FIO_SECONDS = 16;
    private static final long CHANGE_AFTER_MILLIS = 7_000;

    @RegisterExtension
    static final DriverForTheClass driver = new DriverForTheClass("--metrics-address", ADDRESS);
    private static PodVolume published;
    private static Csi.Volume volume;
    private static Path target;
    private static Pod pod;
    private static MetricsScrape busy;
    private static List<MetricsScrape> series = new ArrayList<>();
    private static long changeAt;
    private static long repliedAt;

    @BeforeAll
    static void writeAcrossALimitChangeWhileScraping() throws Exception {
        published = PodVolume.publish(driver.client(), "dashboard", 256 * MIB,
                Map.of("writeBPS", "4Mi", "readBPS", "8Mi", "readIOPS", "1000", "writeIOPS", "1000"));
        volume = published.volume();
        target = published.target();
        pod = published.pod();
        // the errors panel's counter and the abnormal-volumes panel's gauge exist only once there is
        // a failed call and a volume health answer
        expectCode(Status.Code.INVALID_ARGUMENT, () -> driver.client().controller().controllerModifyVolume(
                Csi.ControllerModifyVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                        .putMutableParameters("lvmType", "thin").build()));
        driver.client().node().nodeGetVolumeStats(Csi.NodeGetVolumeStatsRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).setVolumePath(target.toString()).build());
        GuestPods.layOut(target.resolve("data"), 32);
        MetricsScrape.await(ADDRESS, scrape -> scrape.has("lvmqos_volume_group_size_bytes"), Duration.ofSeconds(60));
        MetricsScrape.of(ADDRESS, SERIES_QUERY);

        Path fioLog = GuestEnv.outDir().resolve("dashboard-fio");
        Process fio = new ProcessBuilder(pod.inNewContainer(List.of("fio", "--name=dashboard",
                "--filename=" + target.resolve("data"), "--rw=write", "--bs=1M", "--size=32M", "--direct=1",
                "--ioengine=psync", "--time_based", "--runtime=" + FIO_SECONDS, "--write_bw_log=" + fioLog,
                "--log_avg_msec=1000", "--log_unix_epoch=1")))
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        long writing = MetricsScrape.awaitWriting(ADDRESS, List.of(published.labels("write")), Duration.ofSeconds(30)).atMillis();
        while (fio.isAlive()) {
            long now = System.currentTimeMillis();
            if (busy == null && now >= writing + 3_000) {
                busy = MetricsScrape.of(ADDRESS, "");
            }
            if (changeAt == 0 && now >= writing + CHANGE_AFTER_MILLIS) {
                changeAt = System.currentTimeMillis();
                driver.client().controller().controllerModifyVolume(Csi.ControllerModifyVolumeRequest.newBuilder()
                        .setVolumeId(volume.getVolumeId()).putMutableParameters("writeBPS", "8Mi").build());
                repliedAt = System.currentTimeMillis();
            }
            series.add(MetricsScrape.of(ADDRESS, SERIES_QUERY));
            TimeUnit.MILLISECONDS.sleep(250);
        }
        assertEquals(0, fio.exitValue(), "fio succeeded");
        StringBuilder tsv = new StringBuilder("# epoch_ms\twrite_limit_bytes_per_second\twritten_bytes_total\n");
        for (MetricsScrape scrape : series) {
            tsv.append(scrape.atMillis()).append('\t')
                    .append((long) scrape.require("lvmqos_volume_io_limit_bytes_per_second", published.labels("write"))).append('\t')
                    .append((long) scrape.require("lvmqos_volume_io_bytes_total", published.labels("write"))).append('\n');
        }
        Files.writeString(GuestEnv.outDir().resolve("dashboard-series.tsv"), tsv);
        Files.writeString(GuestEnv.outDir().resolve("dashboard-change.txt"), changeAt + " " + repliedAt + "\n");
        Files.writeString(GuestEnv.outDir().resolve("dashboard-scrape.txt"), busy.text());
    }

    @AfterAll
    static void cleanUp() throws Exception {
        if (published != null) {
            published.close();
        }
    }

    /**
     * The queries of the guarantees row need a group running io.cost with floors promised, which
     * this guest's kernel cannot run; GuaranteeCheck holds them against its own scrape.
     */
    @Test
    void everyMetricAndLabelTheDashboardUsesIsInAScrapeTakenDuringIo() {
        assertTrue(busy != null, "a full scrape was taken while fio wrote");
        boolean psi = Files.exists(Path.of("/proc/pressure/io"));
        Set<String> pressure = Set.of("lvmqos_pod_io_waiting_seconds_total", "lvmqos_pod_io_stalled_seconds_total");
        List<Query> checked = new ArrayList<>();
        for (Query query : DashboardQueries.of(DashboardQueries.file())) {
            if (DashboardQueries.needsIoCost(query)) {
                System.out.println("dashboard: needs io.cost, checked by GuaranteeCheck: " + query.where());
            } else if (!psi && pressure.containsAll(query.metrics())) {
                System.out.println("dashboard: no PSI in this kernel, not checked: " + query.where());
            } else {
                checked.add(query);
            }
        }
        List<String> missing = DashboardCoverage.unserved(checked, busy);
        System.out.println("dashboard: " + checked.size() + " queries checked against a scrape of "
                + busy.samples().size() + " samples taken during I/O");
        assertTrue(missing.isEmpty(), "the dashboard uses what the driver does not serve:\n" + String.join("\n", missing)
                + "\nscrape:\n" + busy.text());
    }

    @Test
    void theSeriesShowsTheLimitAndTheRateFollowingIt() {
        double before = meanRate(changeAt - 5_000, changeAt);
        double after = meanRate(changeAt + 1_000, changeAt + 6_000);
        System.out.printf("dashboard: written %.2f MiB/s at writeBPS=4Mi, %.2f MiB/s after the change to 8Mi%n",
                before / MIB, after / MIB);
        assertTrue(Math.abs(before - 4.0 * MIB) <= 0.2 * 4 * MIB, "before the change: " + before / MIB + " MiB/s");
        assertTrue(Math.abs(after - 8.0 * MIB) <= 0.2 * 8 * MIB, "after the change: " + after / MIB + " MiB/s");
        assertEquals(8L * MIB, (long) series.getLast().require("lvmqos_volume_io_limit_bytes_per_second",
                published.labels("write")), "the gauge serves the new limit");
    }

    /** Bytes per second written between the scrapes nearest to [fromMillis, toMillis]. */
    private static double meanRate(long fromMillis, long toMillis) {
        MetricsScrape first = series.stream().filter(s -> s.atMillis() >= fromMillis).findFirst().orElseThrow();
        MetricsScrape last = series.reversed().stream().filter(s -> s.atMillis() <= toMillis).findFirst().orElseThrow();
        return last.ratePerSecondSince(first, "lvmqos_volume_io_bytes_total", published.labels("write"));
    }
}
