package io.lvmqos.metrics;

import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/** How long group snapshots kept their members' filesystems frozen: the stall their writers saw. */
public final class FreezeMetrics {

    private static final double[] BUCKETS = {0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30};
    private static final FreezeMetrics SHARED = new FreezeMetrics();

    private final Histogram frozen = Histogram.builder()
            .name("lvmqos_group_snapshot_freeze_seconds")
            .help("Time from the first freeze to the last thaw of a group snapshot's filesystems")
            .classicUpperBounds(BUCKETS)
            .classicOnly()
            .withoutExemplars()
            .build();

    public static FreezeMetrics shared() {
        return SHARED;
    }

    public void record(double seconds) {
        frozen.observe(Math.max(0, seconds));
    }

    void register(PrometheusRegistry registry) {
        registry.register(frozen);
    }
}
