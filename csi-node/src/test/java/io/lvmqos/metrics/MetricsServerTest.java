package io.lvmqos.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.lvmqos.lvm.LogicalVolume;
import io.lvmqos.lvm.VolumeGroup;
import io.lvmqos.metrics.LvmReports.VolumeGroupReport;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The HTTP exporter on an ephemeral loopback port, scraped as Prometheus would. */
class MetricsServerTest {

    private final HttpClient http = HttpClient.newHttpClient();
    private final RpcMetrics rpc = new RpcMetrics();
    private MetricsServer server;

    @BeforeEach
    void start() throws Exception {
        PrometheusRegistry registry = new PrometheusRegistry();
        rpc.register(registry);
        VolumeGroup vg = new VolumeGroup("lvmqos", 4L << 30, 1L << 30, 4L << 20);
        LogicalVolume pool = new LogicalVolume("lvmqos", "thinpool", 2L << 30, LogicalVolume.SegmentType.THIN_POOL,
                true, false, false, Optional.of(true), Map.of(), Optional.empty(), Optional.empty(), Instant.EPOCH,
                Path.of("/dev/mapper/lvmqos-thinpool"), OptionalDouble.of(12.5), OptionalDouble.of(3.25), LogicalVolume.PoolHealth.OK);
        LvmReports reports = new LvmReports(() -> List.of(new VolumeGroupReport(vg, List.of(pool))),
                Duration.ofSeconds(30), Clock.fixed(Instant.ofEpochSecond(1_750_000_000), ZoneOffset.UTC), Runnable::run);
        registry.register(new LvmCollector(reports));
        server = MetricsServer.serve(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), registry);
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void servesTheRpcLatencyHistogramAndErrorCountsByCode() throws Exception {
        rpc.record("NodePublishVolume", Status.Code.OK, TimeUnit.MILLISECONDS.toNanos(30));
        rpc.record("NodePublishVolume", Status.Code.OK, TimeUnit.MILLISECONDS.toNanos(700));
        rpc.record("NodePublishVolume", Status.Code.UNAVAILABLE, TimeUnit.MILLISECONDS.toNanos(2));
        rpc.record("CreateVolume", Status.Code.RESOURCE_EXHAUSTED, TimeUnit.SECONDS.toNanos(45));

        HttpResponse<String> response = get("/metrics");

        assertEquals(200, response.statusCode());
        assertTrue(response.headers().firstValue("Content-Type").orElse("").startsWith("text/plain"),
                response.headers().toString());
        String text = response.body();
        assertTrue(text.contains("# TYPE lvmqos_rpc_duration_seconds histogram\n"), text);
        assertTrue(text.contains("lvmqos_rpc_duration_seconds_count{method=\"NodePublishVolume\"} 3\n"), text);
        assertTrue(text.contains("lvmqos_rpc_duration_seconds_bucket{method=\"NodePublishVolume\",le=\"0.005\"} 1\n"), text);
        assertTrue(text.contains("lvmqos_rpc_duration_seconds_bucket{method=\"NodePublishVolume\",le=\"0.05\"} 2\n"), text);
        assertTrue(text.contains("lvmqos_rpc_duration_seconds_bucket{method=\"NodePublishVolume\",le=\"1.0\"} 3\n"), text);
        assertTrue(text.contains("lvmqos_rpc_duration_seconds_bucket{method=\"CreateVolume\",le=\"30.0\"} 0\n"), text);
        assertTrue(text.contains("lvmqos_rpc_duration_seconds_bucket{method=\"CreateVolume\",le=\"60.0\"} 1\n"),
                "buckets go past the library's 10 s for slow calls: " + text);
        assertTrue(text.contains("lvmqos_rpc_duration_seconds_sum{method=\"NodePublishVolume\"} 0.732\n"), text);
        assertTrue(text.contains("# TYPE lvmqos_rpc_errors_total counter\n"), text);
        assertTrue(text.contains("lvmqos_rpc_errors_total{code=\"UNAVAILABLE\",method=\"NodePublishVolume\"} 1.0\n"), text);
        assertTrue(text.contains("lvmqos_rpc_errors_total{code=\"RESOURCE_EXHAUSTED\",method=\"CreateVolume\"} 1.0\n"), text);
        assertFalse(text.contains("code=\"OK\""), "successes are counted by the histogram, not as errors: " + text);
    }

    @Test
    void servesVolumeGroupAndThinPoolCapacity() throws Exception {
        String text = get("/metrics").body();
        assertTrue(text.contains("lvmqos_volume_group_size_bytes{volume_group=\"lvmqos\"} 4.294967296E9\n"), text);
        assertTrue(text.contains("lvmqos_volume_group_free_bytes{volume_group=\"lvmqos\"} 1.073741824E9\n"), text);
        assertTrue(text.contains("lvmqos_thin_pool_size_bytes{thin_pool=\"thinpool\",volume_group=\"lvmqos\"} 2.147483648E9\n"), text);
        assertTrue(text.contains("lvmqos_thin_pool_data_used_ratio{thin_pool=\"thinpool\",volume_group=\"lvmqos\"} 0.125\n"), text);
        assertTrue(text.contains("lvmqos_thin_pool_metadata_used_ratio{thin_pool=\"thinpool\",volume_group=\"lvmqos\"} 0.0325\n"), text);
        assertTrue(text.contains("lvmqos_lvm_report_timestamp_seconds 1.75E9\n"), text);
    }

    @Test
    void aScrapeCanAskForSomeFamiliesOnly() throws Exception {
        rpc.record("DeleteVolume", Status.Code.FAILED_PRECONDITION, 1);
        String text = get("/metrics?name[]=lvmqos_rpc_errors_total").body();
        assertTrue(text.contains("lvmqos_rpc_errors_total{code=\"FAILED_PRECONDITION\",method=\"DeleteVolume\"} 1.0\n"), text);
        assertFalse(text.contains("lvmqos_volume_group") || text.contains("lvmqos_rpc_duration"), text);
    }
}
