package io.lvmqos.metrics;

import io.grpc.Status;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * How long each CSI call took and how many failed, by gRPC code. The interceptor records every
 * call whether or not the endpoint is enabled: an observation is a few atomic adds, cheaper than
 * a branch that would have to be kept right.
 */
public final class RpcMetrics {

    /**
     * From a Probe (milliseconds) to a wipe, mkfs or resize of a large volume (minutes): the
     * library's default buckets stop at 10 s, where the slow calls only begin.
     */
    private static final double[] BUCKETS =
            {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};

    private static final RpcMetrics SHARED = new RpcMetrics();

    private final Histogram duration;
    private final Counter errors;

    public RpcMetrics() {
        duration = Histogram.builder()
                .name("lvmqos_rpc_duration_seconds")
                .help("Time from the start of a CSI call to its reply, by method (the count is the number of calls)")
                .labelNames("method")
                .classicUpperBounds(BUCKETS)
                .classicOnly()
                .withoutExemplars()
                .build();
        errors = Counter.builder()
                .name("lvmqos_rpc_errors_total")
                .help("CSI calls that ended with a status other than OK, by method and gRPC code")
                .labelNames("method", "code")
                .withoutExemplars()
                .build();
    }

    /** The instance the gRPC interceptor records into and the metrics endpoint serves. */
    public static RpcMetrics shared() {
        return SHARED;
    }

    /**
     * Records one finished call.
     *
     * @param method the bare method name, e.g. {@code NodePublishVolume}
     * @param nanos the call's duration, from {@link System#nanoTime()} differences
     */
    public void record(String method, Status.Code code, long nanos) {
        duration.labelValues(method).observe(Math.max(0, nanos) / 1e9);
        if (code != Status.Code.OK) {
            errors.labelValues(method, code.name()).inc();
        }
    }

    void register(PrometheusRegistry registry) {
        registry.register(duration);
        registry.register(errors);
    }
}
