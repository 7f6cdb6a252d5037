package io.lvmqos.metrics;

import io.lvmqos.cgroup.PodCgroups;
import io.lvmqos.lvm.Lvm;
import io.lvmqos.mount.MountTable;
import io.lvmqos.node.VolumeConditions;
import io.lvmqos.volume.GuaranteePolicy;
import io.lvmqos.volume.VolumeCatalog;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Prometheus endpoint of the node plugin ({@code --metrics-address}), serving /metrics:
 * per published volume and pod the limits and the I/O done, per RPC the latency and the errors,
 * per volume group and thin pool the capacity. Everything except the LVM capacity is computed
 * when scraped, from the mount table, sysfs, the cgroup tree and the catalog's index.
 */
public final class MetricsServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(MetricsServer.class);
    private static final Path SYS = Path.of("/sys");
    private static final Path DEV = Path.of("/dev");

    private final HTTPServer http;
    /** How long closing waits for a running lvs to stop: SIGTERM, its grace, then SIGKILL for a read. */
    private static final Duration REPORT_STOP_BOUND = Duration.ofSeconds(15);

    private final Optional<LvmReports> reports;

    private MetricsServer(HTTPServer http, Optional<LvmReports> reports) {
        this.http = http;
        this.reports = reports;
    }

    /**
     * Starts serving. The first LVM report is left to {@link #startLvmReport()}, so that at start it
     * does not run lvm at the same time as the catalog's index and slow the first Probe down.
     *
     * @param kubeletDir the kubelet directory's real path, as the mount table spells it
     * @throws IOException when the address cannot be bound (in use, or not an address of this host)
     */
    public static MetricsServer start(InetSocketAddress address, VolumeCatalog catalog, Lvm lvm, MountTable mountTable,
                                      Path kubeletDir, PodCgroups cgroups, VolumeConditions conditions,
                                      GuaranteePolicy guarantees, Supplier<Map<String, Long>> floorsUnmet)
            throws IOException {
        PrometheusRegistry registry = new PrometheusRegistry();
        RpcMetrics.shared().register(registry);
        FreezeMetrics.shared().register(registry);
        PublishedVolumes published = new PublishedVolumes(mountTable, kubeletDir, DEV, new SysBlock(SYS),
                catalog.node(), catalog.volumeGroups(), catalog::find);
        registry.register(new VolumeCollector(published, cgroups, new CgroupIoFiles(), conditions::abnormal));
        LvmReports reports = LvmReports.of(lvm, catalog.volumeGroups());
        registry.register(new LvmCollector(reports, guarantees, catalog::indexed, floorsUnmet));
        MetricsServer server = new MetricsServer(listen(address, registry), Optional.of(reports));
        log.info("serving metrics on http://{}:{}/metrics", address.getAddress().getHostAddress(), server.port());
        return server;
    }

    /** Serves a registry; scrapes run on virtual threads, as the RPCs do. */
    static MetricsServer serve(InetSocketAddress address, PrometheusRegistry registry) throws IOException {
        return new MetricsServer(listen(address, registry), Optional.empty());
    }

    private static HTTPServer listen(InetSocketAddress address, PrometheusRegistry registry) throws IOException {
        return HTTPServer.builder()
                .inetAddress(address.getAddress())
                .port(address.getPort())
                .registry(registry)
                .executorService(Executors.newVirtualThreadPerTaskExecutor())
                .buildAndStart();
    }

    /**
     * Starts the first LVM report in the background unless a scrape already has, so that the
     * first scrape usually finds one; called once the start-up index is built.
     */
    public void startLvmReport() {
        reports.ifPresent(LvmReports::refreshIfDue);
    }

    /** The port listened on (the one asked for, or the one picked for port 0). */
    public int port() {
        return http.getPort();
    }

    @Override
    public void close() {
        http.close();
        reports.ifPresent(r -> r.close(REPORT_STOP_BOUND));
    }
}
