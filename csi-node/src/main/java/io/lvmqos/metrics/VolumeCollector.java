package io.lvmqos.metrics;

import io.lvmqos.cgroup.PodCgroups;
import io.lvmqos.metrics.PublishedVolumes.PodVolume;
import io.lvmqos.volume.IoLimits;
import io.lvmqos.volume.VolumeId;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Per published volume and pod, computed at each scrape: the limits the volume carries, what the
 * pod's cgroup has read and written on the volume's device, and (cgroup v2) how long the pod's
 * tasks have stalled on I/O. Comparing the rate of the byte counter with the limit, and the
 * growth of the stall time, is how an operator sees that a pod is being throttled.
 */
final class VolumeCollector implements MultiCollector {

    static final String LIMIT_BYTES = "lvmqos_volume_io_limit_bytes_per_second";
    static final String LIMIT_OPS = "lvmqos_volume_io_limit_operations_per_second";
    static final String IO_BYTES = "lvmqos_volume_io_bytes";
    static final String IO_OPS = "lvmqos_volume_io_operations";
    static final String PRESSURE_SOME = "lvmqos_pod_io_waiting_seconds";
    static final String PRESSURE_FULL = "lvmqos_pod_io_stalled_seconds";
    static final String ABNORMAL = "lvmqos_volume_abnormal";

    private static final Logger log = LoggerFactory.getLogger(VolumeCollector.class);
    private static final int MAX_WARNED = 1000;

    private final Set<String> warned = ConcurrentHashMap.newKeySet();
    private final PublishedVolumes published;
    private final PodCgroups cgroups;
    private final CgroupIoFiles files;
    private final Function<VolumeId, Optional<Boolean>> abnormal;

    /** @param abnormal whether NodeGetVolumeStats last found the volume abnormal; empty if not asked yet */
    VolumeCollector(PublishedVolumes published, PodCgroups cgroups, CgroupIoFiles files,
                    Function<VolumeId, Optional<Boolean>> abnormal) {
        this.published = published;
        this.cgroups = cgroups;
        this.files = files;
        this.abnormal = abnormal;
    }

    @Override
    public MetricSnapshots collect() {
        long started = System.nanoTime();
        List<PodVolume> volumes;
        try {
            volumes = published.list();
        } catch (RuntimeException e) {
            log.warn("metrics: cannot list published volumes: {}", e.getMessage());
            return new MetricSnapshots();
        }
        long listed = System.nanoTime();
        var limitBytes = GaugeSnapshot.builder().name(LIMIT_BYTES)
                .help("Bytes per second the volume's pod may read or write on it (io.max rbps/wbps); absent when unlimited");
        var limitOps = GaugeSnapshot.builder().name(LIMIT_OPS)
                .help("I/O operations per second the volume's pod may do on it (io.max riops/wiops); absent when unlimited");
        var ioBytes = CounterSnapshot.builder().name(IO_BYTES)
                .help("Bytes the pod has read or written on the volume's device, after throttling (cgroup io.stat rbytes/wbytes)");
        var ioOps = CounterSnapshot.builder().name(IO_OPS)
                .help("I/O operations the pod has done on the volume's device, after throttling (cgroup io.stat rios/wios)");
        var waiting = CounterSnapshot.builder().name(PRESSURE_SOME)
                .help("Time in which some of the pod's tasks were stalled on I/O, e.g. held back by io.max (io.pressure some total)");
        var stalled = CounterSnapshot.builder().name(PRESSURE_FULL)
                .help("Time in which all of the pod's non-idle tasks were stalled on I/O (io.pressure full total)");

        var conditions = GaugeSnapshot.builder().name(ABNORMAL)
                .help("1 when the last NodeGetVolumeStats found the volume abnormal (its device gone or failing reads,"
                        + " its filesystem read-only), 0 when healthy; absent until kubelet has asked since the start");
        Map<VolumeId, Boolean> seen = new LinkedHashMap<>();
        Map<String, Optional<Path>> podCgroups = new LinkedHashMap<>();
        for (PodVolume volume : volumes) {
            VolumeId id = volume.volume().id();
            if (!seen.containsKey(id)) {
                seen.put(id, true);
                abnormal.apply(id).ifPresent(bad -> conditions.dataPoint(GaugeDataPointSnapshot.builder()
                        .labels(Labels.of("volume_id", id.toString())).value(bad ? 1 : 0).build()));
            }
            Labels labels = Labels.of("volume_id", volume.volume().id().toString(), "pod_uid", volume.podUid(),
                    "device", volume.device().toString());
            IoLimits limits = volume.volume().limits();
            gauge(limitBytes, labels, "read", limits.readBps());
            gauge(limitBytes, labels, "write", limits.writeBps());
            gauge(limitOps, labels, "read", limits.readIops());
            gauge(limitOps, labels, "write", limits.writeIops());
            Optional<Path> cgroup = podCgroups.computeIfAbsent(volume.podUid(), this::cgroupOf);
            try {
                cgroup.flatMap(path -> files.counters(path, volume.device())).ifPresent(counters -> {
                    ioBytes.dataPoint(counter(labels.add("direction", "read"), counters.readBytes()));
                    ioBytes.dataPoint(counter(labels.add("direction", "write"), counters.writeBytes()));
                    ioOps.dataPoint(counter(labels.add("direction", "read"), counters.readOps()));
                    ioOps.dataPoint(counter(labels.add("direction", "write"), counters.writeOps()));
                });
            } catch (RuntimeException e) {
                warnOnce("metrics: no I/O counters of " + volume.volume().id() + " in pod " + volume.podUid() + ": " + e);
            }
        }
        podCgroups.forEach((pod, cgroup) -> {
            try {
                cgroup.flatMap(files::pressure).ifPresent(pressure -> {
                    Labels labels = Labels.of("pod_uid", pod);
                    waiting.dataPoint(counter(labels, pressure.someMicros() / 1e6));
                    pressure.fullMicros().ifPresent(full -> stalled.dataPoint(counter(labels, full / 1e6)));
                });
            } catch (RuntimeException e) {
                warnOnce("metrics: no I/O pressure of pod " + pod + ": " + e);
            }
        });
        // the parts of a scrape's own cost, for profiling it on a large node
        log.debug("metrics: {} volumes in {} pods: {} ms for the mount table and the dm names, {} ms for the pods'"
                + " cgroup files", volumes.size(), podCgroups.size(), (listed - started) / 1_000_000,
                (System.nanoTime() - listed) / 1_000_000);
        return nonEmpty(limitBytes.build(), limitOps.build(), ioBytes.build(), ioOps.build(), waiting.build(),
                stalled.build(), conditions.build());
    }

    /**
     * A file the kernel wrote that cannot be read or parsed loses only its own series; it is
     * logged once as a warning and then at debug, so a scrape every few seconds does not flood the log.
     */
    private void warnOnce(String message) {
        if (warned.size() >= MAX_WARNED) {
            warned.clear();
        }
        if (warned.add(message)) {
            log.warn("{} (further occurrences at debug)", message);
        } else {
            log.debug(message);
        }
    }

    private Optional<Path> cgroupOf(String podUid) {
        try {
            return cgroups.find(podUid).cgroup();
        } catch (RuntimeException e) {
            log.debug("metrics: no cgroup for pod {}: {}", podUid, e.getMessage());
            return Optional.empty();
        }
    }

    private static void gauge(GaugeSnapshot.Builder family, Labels labels, String direction, OptionalLong value) {
        if (value.isPresent()) {
            family.dataPoint(GaugeDataPointSnapshot.builder().labels(labels.add("direction", direction))
                    .value(value.getAsLong()).build());
        }
    }

    private static CounterDataPointSnapshot counter(Labels labels, double value) {
        return CounterDataPointSnapshot.builder().labels(labels).value(value).build();
    }

    static MetricSnapshots nonEmpty(MetricSnapshot... families) {
        List<MetricSnapshot> kept = new ArrayList<>();
        for (MetricSnapshot family : families) {
            if (!family.getDataPoints().isEmpty()) {
                kept.add(family);
            }
        }
        return new MetricSnapshots(kept);
    }
}
