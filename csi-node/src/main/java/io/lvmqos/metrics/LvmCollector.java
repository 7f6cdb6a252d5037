package io.lvmqos.metrics;

import io.lvmqos.lvm.LogicalVolume;
import io.lvmqos.metrics.LvmReports.Snapshot;
import io.lvmqos.metrics.LvmReports.VolumeGroupReport;
import io.lvmqos.volume.DiskCapacity;
import io.lvmqos.volume.Guarantee;
import io.lvmqos.volume.GuaranteePolicy;
import io.lvmqos.volume.ManagedVolume;
import io.lvmqos.volume.VolumeId;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.function.Supplier;

/** Capacity of the volume groups and thin pools, from the last LVM report (at most 30 s old when scraped regularly). */
final class LvmCollector implements MultiCollector {

    static final String VG_SIZE = "lvmqos_volume_group_size_bytes";
    static final String VG_FREE = "lvmqos_volume_group_free_bytes";
    static final String POOL_SIZE = "lvmqos_thin_pool_size_bytes";
    static final String POOL_DATA = "lvmqos_thin_pool_data_used_ratio";
    static final String POOL_METADATA = "lvmqos_thin_pool_metadata_used_ratio";
    static final String POOL_OUT_OF_SPACE = "lvmqos_thin_pool_out_of_space";
    static final String REPORT_TIME = "lvmqos_lvm_report_timestamp_seconds";
    static final String FLOOR_IOPS_PROMISED = "lvmqos_floor_promised_iops";
    static final String FLOOR_BPS_PROMISED = "lvmqos_floor_promised_bytes_per_second";
    static final String CAPACITY_IOPS = "lvmqos_floor_capacity_iops";
    static final String CAPACITY_BPS = "lvmqos_floor_capacity_bytes_per_second";
    static final String MODEL_TRUSTED = "lvmqos_io_cost_model_trusted";
    static final String FLOORS_UNMET = "lvmqos_floors_unmet";

    private final LvmReports reports;
    private final GuaranteePolicy guarantees;
    private final Supplier<List<ManagedVolume>> volumes;
    private final Supplier<Map<String, Long>> floorsUnmet;

    /**
     * @param volumes the volume index: the floors promised are read from it, so a scrape right after
     *     a CreateVolume or DeleteVolume counts it, with no lvm
     */
    LvmCollector(LvmReports reports, GuaranteePolicy guarantees, Supplier<List<ManagedVolume>> volumes,
                 Supplier<Map<String, Long>> floorsUnmet) {
        this.reports = reports;
        this.guarantees = guarantees;
        this.volumes = volumes;
        this.floorsUnmet = floorsUnmet;
    }

    LvmCollector(LvmReports reports) {
        this(reports, GuaranteePolicy.NONE, List::of, Map::of);
    }

    @Override
    public MetricSnapshots collect() {
        Optional<Snapshot> latest = reports.latest();
        if (latest.isEmpty()) {
            return new MetricSnapshots();
        }
        var vgSize = GaugeSnapshot.builder().name(VG_SIZE).help("Size of the volume group");
        var vgFree = GaugeSnapshot.builder().name(VG_FREE).help("Unallocated space in the volume group");
        var poolSize = GaugeSnapshot.builder().name(POOL_SIZE).help("Data size of the thin pool");
        var poolData = GaugeSnapshot.builder().name(POOL_DATA)
                .help("Fraction of the thin pool's data space in use (lvs data_percent / 100)");
        var poolMetadata = GaugeSnapshot.builder().name(POOL_METADATA)
                .help("Fraction of the thin pool's metadata space in use (lvs metadata_percent / 100)");
        var poolOutOfSpace = GaugeSnapshot.builder().name(POOL_OUT_OF_SPACE)
                .help("1 when the thin pool is out of data space or its metadata went read-only (lv_attr's ninth"
                        + " character D, M or F): its volumes' writes that need new blocks stall or fail until it"
                        + " is extended");
        var promisedIops = GaugeSnapshot.builder().name(FLOOR_IOPS_PROMISED)
                .help("IOPS floors promised to the group's volumes (their LV tags), reads and writes together");
        var promisedBps = GaugeSnapshot.builder().name(FLOOR_BPS_PROMISED)
                .help("Byte-rate floors promised to the group's volumes (their LV tags), reads and writes together");
        var capacityIops = GaugeSnapshot.builder().name(CAPACITY_IOPS)
                .help("IOPS of the slower direction of the group's disk, which floors are admitted against: its io.cost"
                        + " model's random IOPS at the lowest vrate");
        var capacityBps = GaugeSnapshot.builder().name(CAPACITY_BPS)
                .help("Bytes per second of the slower direction of the group's disk, which floors are admitted"
                        + " against: its io.cost model's sequential rate at the lowest vrate");
        var modelTrusted = GaugeSnapshot.builder().name(MODEL_TRUSTED)
                .help("1 when io.cost runs on the group's disk with a model the driver trusts (the operator's or"
                        + " a calibration's), 0 when the operator asked io.cost for the group (--io-cost) but it"
                        + " could not be kept there (no trusted model: run lvmqos calibrate; see the plugin's log),"
                        + " so its weights and floors are refused");
        var unmet = GaugeSnapshot.builder().name(FLOORS_UNMET)
                .help("Volumes of the group short of a floor now: over the last 10 s their pod waited for I/O at"
                        + " least half the time and got less than 90% of the floor (the volume's condition in"
                        + " NodeGetVolumeStats says which floor and by how much); the disk does less than its model");
        Map<String, Long> unmetNow = floorsUnmet.get();
        Map<String, List<Guarantee>> byGroup = new HashMap<>();
        for (ManagedVolume volume : volumes.get()) {
            if (volume.id().kind() == VolumeId.Kind.VOLUME && volume.qos().guarantee().hasFloor()) {
                byGroup.computeIfAbsent(volume.id().volumeGroup(), g -> new ArrayList<>()).add(volume.qos().guarantee());
            }
        }
        for (VolumeGroupReport report : latest.get().groups()) {
            Labels group = Labels.of("volume_group", report.group().name());
            DiskCapacity declared = guarantees.declared(report.group().name());
            GuaranteePolicy.Promised promised = GuaranteePolicy.promised(byGroup.getOrDefault(report.group().name(), List.of()));
            if (declared.isDeclared() || promised.iops() > 0 || promised.bps() > 0) {
                promisedIops.dataPoint(gauge(group, promised.iops()));
                promisedBps.dataPoint(gauge(group, promised.bps()));
            }
            declared.iops().ifPresent(iops -> capacityIops.dataPoint(gauge(group, iops)));
            declared.bps().ifPresent(bps -> capacityBps.dataPoint(gauge(group, bps)));
            String name = report.group().name();
            if (guarantees.ioCostEnabled(name) || guarantees.refusalOf(name).isPresent()) {
                modelTrusted.dataPoint(gauge(group, guarantees.ioCostEnabled(name) ? 1 : 0));
            }
            if (guarantees.ioCostEnabled(name)) {
                unmet.dataPoint(gauge(group, unmetNow.getOrDefault(name, 0L)));
            }
            vgSize.dataPoint(gauge(group, report.group().sizeBytes()));
            vgFree.dataPoint(gauge(group, report.group().freeBytes()));
            for (LogicalVolume pool : report.thinPools()) {
                Labels labels = group.add("thin_pool", pool.name());
                poolSize.dataPoint(gauge(labels, pool.sizeBytes()));
                ratio(poolData, labels, pool.dataPercent());
                ratio(poolMetadata, labels, pool.metadataPercent());
                poolOutOfSpace.dataPoint(gauge(labels, pool.health() == LogicalVolume.PoolHealth.OK ? 0 : 1));
            }
        }
        var reportTime = GaugeSnapshot.builder().name(REPORT_TIME)
                .help("When the LVM report these figures come from finished (Unix time); reports are refreshed"
                        + " in the background at most every " + LvmReports.MAX_AGE.toSeconds() + " s")
                .dataPoint(gauge(Labels.EMPTY, latest.get().takenAt().toEpochMilli() / 1e3));
        return VolumeCollector.nonEmpty(vgSize.build(), vgFree.build(), poolSize.build(), poolData.build(),
                poolMetadata.build(), poolOutOfSpace.build(), reportTime.build(), promisedIops.build(),
                promisedBps.build(), capacityIops.build(), capacityBps.build(), modelTrusted.build(), unmet.build());
    }

    private static void ratio(GaugeSnapshot.Builder family, Labels labels, OptionalDouble percent) {
        if (percent.isPresent()) {
            family.dataPoint(gauge(labels, percent.getAsDouble() / 100));
        }
    }

    private static GaugeDataPointSnapshot gauge(Labels labels, double value) {
        return GaugeDataPointSnapshot.builder().labels(labels).value(value).build();
    }
}
