package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.e2e.deploy.DashboardQueries.Query;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Grafana dashboard's shape and the reading of its PromQL; that every name it uses is exported
 * is checked against a live scrape by the guest's DashboardCheck.
 */
class DashboardTest {

    private static final List<Query> QUERIES = DashboardQueries.of(DashboardQueries.file());

    private static Set<String> metrics() {
        return QUERIES.stream().flatMap(q -> q.metrics().stream()).collect(Collectors.toSet());
    }

    @Test
    void everyQueryNamesOnlyTheDriversMetrics() {
        for (Query query : QUERIES) {
            assertTrue(!query.metrics().isEmpty(), query.where() + " names no metric: " + query.expr());
            query.metrics().forEach(m -> assertTrue(m.startsWith("lvmqos_"), query.where() + " names " + m));
        }
    }

    /**
     * Each metric family the dashboard names is one the driver's code registers, even those a
     * given kernel does not serve (io.pressure needs PSI, which the UML guest's kernel lacks, so
     * DashboardCheck cannot find them in its scrape).
     */
    @Test
    void everyMetricFamilyIsNamedInTheDriversCode() throws IOException {
        Set<String> registered = new TreeSet<>();
        Pattern literal = Pattern.compile("\"(lvmqos_[a-z0-9_]+)\"");
        try (Stream<Path> sources = Files.walk(DeployTree.root().resolve("csi-node/src/main/java"))) {
            for (Path source : sources.filter(f -> f.toString().endsWith(".java")).toList()) {
                Matcher matcher = literal.matcher(Files.readString(source));
                while (matcher.find()) {
                    registered.add(matcher.group(1));
                }
            }
        }
        for (String metric : metrics()) {
            // a counter "x" is exposed as x_total, a histogram "x" as x_bucket, x_count and x_sum
            String family = metric.replaceAll("_(total|bucket|count|sum)$", "");
            assertTrue(registered.contains(family) || registered.contains(metric),
                    metric + " is not among the driver's metrics " + registered);
        }
    }

    @Test
    void thePanelsTheOperatorNeedsAreThere() {
        assertTrue(metrics().containsAll(Set.of("lvmqos_volume_io_limit_bytes_per_second",
                "lvmqos_volume_io_limit_operations_per_second", "lvmqos_volume_io_bytes_total",
                "lvmqos_volume_io_operations_total", "lvmqos_pod_io_waiting_seconds_total",
                "lvmqos_rpc_duration_seconds_bucket", "lvmqos_rpc_errors_total", "lvmqos_volume_group_size_bytes",
                "lvmqos_volume_group_free_bytes", "lvmqos_thin_pool_data_used_ratio",
                "lvmqos_thin_pool_metadata_used_ratio")), metrics().toString());
        List<Query> held = QUERIES.stream().filter(q -> q.where().startsWith("Pods held at their limit")).toList();
        assertEquals(2, held.size());
        held.forEach(q -> assertTrue(q.expr().endsWith(">= 0.95"), q.expr()));
        Set<String> errorLabels = QUERIES.stream().filter(q -> q.metrics().contains("lvmqos_rpc_errors_total"))
                .flatMap(q -> q.labels().stream()).collect(Collectors.toSet());
        assertTrue(errorLabels.containsAll(Set.of("method", "code")), errorLabels.toString());
    }

    /**
     * Each query is held against one live scrape: DashboardCheck's (no io.cost) or GuaranteeCheck's
     * (io.cost with floors). A query mixing the two kinds would be checked by neither.
     */
    @Test
    void eachQueryNeedsIoCostWhollyOrNotAtAll() {
        List<Query> ioCost = QUERIES.stream().filter(DashboardQueries::needsIoCost).toList();
        assertTrue(!ioCost.isEmpty(), "the guarantees row is there");
        for (Query query : ioCost) {
            assertTrue(DashboardQueries.IO_COST_METRICS.containsAll(query.metrics()),
                    query.where() + " mixes io.cost families with others: " + query.metrics());
        }
    }

    @Test
    void theReadingFindsNamesInEveryPartOfAnExpression() {
        Query query = DashboardQueries.parse("t", "histogram_quantile(0.9, sum by (method, le) "
                + "(rate(a_bucket{x=~\"$v\", y!=\"{z}\"}[$__rate_interval]))) / on (q) b >= 1e3");
        assertEquals(Set.of("a_bucket", "b"), query.metrics());
        assertEquals(Set.of("method", "le", "x", "y", "q"), query.labels());
        assertThrows(IllegalArgumentException.class, () -> DashboardQueries.parse("t", "predict_linear(a[1h], 60)"));
    }

    @Test
    void theChartShipsTheDashboardUnchanged(@TempDir Path scratch) {
        Path values = HelmChart.valuesFile(scratch, "dashboard", Map.of("metrics", Map.of("dashboard",
                Map.of("enabled", true))));
        YamlNode configMap = DeployTree.named(HelmChart.template(values), "ConfigMap", "lvmqos-dashboard");
        assertEquals("1", configMap.path("metadata.labels").get("grafana_dashboard").text());
        Object shipped = new org.yaml.snakeyaml.Yaml().load(configMap.path("data").get("lvmqos.json").text());
        assertEquals(DashboardQueries.dashboard(DashboardQueries.file()), shipped);
    }
}
