package io.lvmqos.guarantee;

import io.lvmqos.cgroup.IoCost;
import io.lvmqos.device.BackingDisks;
import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import io.lvmqos.guarantee.DirectIoBench.Direction;
import io.lvmqos.guarantee.DirectIoBench.Result;
import io.lvmqos.guarantee.DirectIoBench.Workload;
import io.lvmqos.lvm.LogicalVolume;
import io.lvmqos.lvm.Lvm;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Measures the io.cost linear model of the disk under a volume group through a logical volume it
 * makes in that group for the purpose and removes afterwards, so that nothing outside the group's
 * free space (or its thin pool) is ever written. The six figures are measured as the kernel's
 * model generator measures them (tools/cgroup/iocost_coef_gen.py): large sequential transfers one
 * at a time for bytes per second, 4 KiB operations 64 in flight for operations per second, with the
 * disk's request merging and I/O scheduler off for the time (and put back after).
 *
 * <p>A model is only true of an idle disk: the disk's own counters are read around each workload,
 * and a workload during which the disk did more than {@value #BUSY_MARGIN_PERCENT}% other I/O than
 * the calibration's refuses the whole result. io.cost, if on for the disk, is turned off while the
 * disk is measured (it would otherwise measure the old model) and put back as it was.
 */
public final class Calibrator {

    /** The calibration's own LV: never a volume's name (those start vol_ or snap_). */
    public static final String LV_NAME = "lvmqos_calibration";
    /** Marks the LV as the calibration's, so that one a killed run left is known and removed. */
    static final String LV_TAG = "lvmqos.calibration";
    static final int BUSY_MARGIN_PERCENT = 10;
    /** How much slower the second half of a workload may run than the first before only it counts. */
    static final int SLOWED_PERCENT = 10;
    static final int MIN_HALF_OPERATIONS = 20;
    static final int SMALL_BLOCK = 4096;
    static final int DEPTH = 64;

    /**
     * What to calibrate, and how.
     *
     * @param volumeGroup the group whose disk is measured
     * @param thinPool the pool to make the LV in; empty for a linear LV in the group's free space
     * @param sizeBytes the LV's size: what random offsets spread over
     * @param perWorkload how long each of the six workloads runs
     * @param sequentialBlockBytes the size of each transfer for the byte rates
     */
    public record Request(String volumeGroup, Optional<String> thinPool, long sizeBytes, Duration perWorkload,
                          int sequentialBlockBytes) {
    }

    private final Lvm lvm;
    private final BackingDisks backingDisks;
    private final IoCost ioCost;
    private final Path sys;
    private final DirectIoBench bench;
    private final Clock clock;
    private final Consumer<String> progress;

    public Calibrator(Lvm lvm, BackingDisks backingDisks, IoCost ioCost, Path sys, DirectIoBench bench, Clock clock,
                      Consumer<String> progress) {
        this.lvm = lvm;
        this.backingDisks = backingDisks;
        this.ioCost = ioCost;
        this.sys = sys;
        this.bench = bench;
        this.clock = clock;
        this.progress = progress;
    }

    /** The six workloads, in the order the kernel's generator runs them. */
    static List<Workload> workloads(int sequentialBlockBytes) {
        return List.of(
                new Workload("rbps", Direction.READ, false, sequentialBlockBytes, 1),
                new Workload("rseqiops", Direction.READ, false, SMALL_BLOCK, DEPTH),
                new Workload("rrandiops", Direction.READ, true, SMALL_BLOCK, DEPTH),
                new Workload("wbps", Direction.WRITE, false, sequentialBlockBytes, 1),
                new Workload("wseqiops", Direction.WRITE, false, SMALL_BLOCK, DEPTH),
                new Workload("wrandiops", Direction.WRITE, true, SMALL_BLOCK, DEPTH));
    }

    /**
     * The disk under the volume group: its one whole disk, or a refusal naming what it lies on.
     *
     * @throws DriverException.FailedPrecondition when the group is not here or spans several disks
     */
    public DeviceNumber diskOf(String volumeGroup) {
        GroupDisks under = GroupDisks.of(lvm, backingDisks, volumeGroup);
        if (under.disks().size() != 1) {
            throw DriverException.failedPrecondition("volume group " + volumeGroup + " lies on " + under.disks().size()
                    + " disks " + under.disks() + " (physical volumes " + under.physicalVolumes() + "): one measurement"
                    + " cannot describe each of them. Give each its model with --io-cost-model, or keep the group on"
                    + " one disk");
        }
        return under.disks().iterator().next();
    }

    /**
     * Measures the group's disk, as {@link #diskOf} found it; nothing is recorded here (see
     * {@link Calibration#tag()}).
     */
    public Calibration measure(Request request, DeviceNumber disk) {
        DiskQueue queue = new DiskQueue(sys, disk);
        long diskBytes;
        try {
            diskBytes = queue.sizeBytes();
        } catch (IOException e) {
            throw DriverException.internal("cannot read the size of disk " + disk + " from sysfs: " + e.getMessage(), e);
        }
        removeLeftover(request.volumeGroup());
        LogicalVolume lv = create(request);
        Optional<Map<String, String>> ioCostBefore = Optional.empty();
        QueueSettings queueBefore = null;
        try {
            if (ioCost.available() && ioCost.enabledOn(disk)) {
                ioCostBefore = ioCost.qos(disk);
                progress.accept("io.cost is on for disk " + disk + ": off while it is measured, then put back");
                ioCost.disable(disk);
            }
            queueBefore = QueueSettings.turnOff(queue, progress);
            Path device = lv.devicePath();
            if (request.thinPool().isPresent()) {
                progress.accept("writing the thin volume once (" + (request.sizeBytes() >> 20) + " MiB) so that every"
                        + " block is provisioned before it is measured");
                bench.fill(device, request.sizeBytes(), 4 << 20);
            }
            Map<String, Long> figures = new LinkedHashMap<>();
            for (Workload workload : workloads(request.sequentialBlockBytes())) {
                progress.accept(String.format("%-9s %s, %d s ...", workload.key(), workload.describe(),
                        request.perWorkload().toSeconds()));
                DiskQueue.Counters before = queue.counters();
                Result result = bench.run(device, request.sizeBytes(), workload, request.perWorkload());
                DiskQueue.Counters done = queue.counters().minus(before);
                requireIdle(disk, workload, result, done);
                Result counted = steady(workload, result);
                long figure = Math.round(workload.key().endsWith("bps") ? counted.bps() : counted.iops());
                if (figure <= 0) {
                    throw DriverException.failedPrecondition(workload.key() + " measured as 0 on disk " + disk + ": "
                            + result.operations() + " operations in " + result.elapsed().toMillis() + " ms");
                }
                figures.put(workload.key(), figure);
                progress.accept(String.format("%-9s = %d   (%d operations in %.1f s)", workload.key(), figure,
                        result.operations(), result.elapsed().toNanos() / 1e9));
            }
            CostModel model = CostModel.fromSettings(strings(figures)).orElseThrow();
            return new Calibration(model, diskBytes, clock.instant());
        } catch (IOException e) {
            throw DriverException.internal("measuring disk " + disk + " through " + lv.devicePath() + " failed: "
                    + e.getMessage(), e);
        } finally {
            if (queueBefore != null) {
                queueBefore.restore(queue, progress);
            }
            ioCostBefore.ifPresent(qos -> ioCost.restoreQos(disk, qos));
            lvm.remove(request.volumeGroup(), LV_NAME);
            progress.accept("removed " + request.volumeGroup() + "/" + LV_NAME);
        }
    }

    /**
     * The part of a workload's run that tells what the disk sustains: all of it, or its second half
     * when the disk slowed by more than {@value #SLOWED_PERCENT}% from the first half to the second (a
     * burst allowance spent, a cache filled), said on the terminal. A disk whose burst outlasts half
     * the run is measured at its burst rate: run with --seconds longer than the burst.
     */
    private Result steady(Workload workload, Result result) {
        // a few large transfers are too few to split: one more or less in a half is no trend
        if (result.operations() - result.lateOperations() < MIN_HALF_OPERATIONS
                || result.lateOperations() < MIN_HALF_OPERATIONS
                || result.lateIops() * 100 >= result.earlyIops() * (100 - SLOWED_PERCENT)) {
            return result;
        }
        progress.accept(String.format("%-9s   the disk slowed while measured, %.0f then %.0f operations per second:"
                + " the figure is the second half's; if the disk has a burst allowance longer than %.1f s, calibrate"
                + " again with a longer --seconds", workload.key(), result.earlyIops(), result.lateIops(),
                result.lateElapsed().toMillis() / 1e3));
        return result.late();
    }

    /**
     * Refuses the measurement when the disk did noticeably more than the calibration asked of it:
     * another workload shared the disk, and its figure is not the disk's.
     */
    private static void requireIdle(DeviceNumber disk, Workload workload, Result result, DiskQueue.Counters done) {
        boolean reads = workload.direction() == Direction.READ;
        long diskBytes = done.readBytes() + done.writtenBytes();
        long foreign = diskBytes - result.bytes();
        if (foreign * 100 > result.bytes() * BUSY_MARGIN_PERCENT) {
            throw DriverException.failedPrecondition(String.format("disk %s was busy while %s was measured: it %s %d"
                    + " bytes and %s %d, of which the calibration's own %s were %d bytes (more than %d%% other I/O)."
                    + " Nothing was recorded: calibrate when nothing else uses the disk (before pods are scheduled to"
                    + " the node, or with them drained)", disk, workload.key(), "read", done.readBytes(), "wrote",
                    done.writtenBytes(), reads ? "reads" : "writes", result.bytes(), BUSY_MARGIN_PERCENT));
        }
    }

    private void removeLeftover(String volumeGroup) {
        Optional<LogicalVolume> old = lvm.logicalVolume(volumeGroup, LV_NAME);
        if (old.isEmpty()) {
            return;
        }
        if (!old.get().tags().containsKey(LV_TAG)) {
            throw DriverException.failedPrecondition("volume group " + volumeGroup + " has an LV named " + LV_NAME
                    + " that calibrate did not make (no " + LV_TAG + " tag): rename or remove it first");
        }
        progress.accept("removing " + volumeGroup + "/" + LV_NAME + ", left by a calibration that did not finish");
        lvm.remove(volumeGroup, LV_NAME);
    }

    private LogicalVolume create(Request request) {
        List<String> tags = List.of(Lvm.tag(LV_TAG, Long.toString(clock.instant().getEpochSecond())));
        String where = request.thinPool().map(pool -> "thin pool " + request.volumeGroup() + "/" + pool)
                .orElse("the free space of volume group " + request.volumeGroup());
        try {
            if (request.thinPool().isPresent()) {
                lvm.createThin(request.volumeGroup(), request.thinPool().get(), LV_NAME, request.sizeBytes(), tags);
            } else {
                lvm.createLinear(request.volumeGroup(), LV_NAME, request.sizeBytes(), tags);
            }
        } catch (DriverException e) {
            throw DriverException.failedPrecondition("cannot make the calibration's " + (request.sizeBytes() >> 20)
                    + " MiB LV in " + where + ": " + e.getMessage().replaceAll("[.\\s]+$", "") + ". Give a smaller"
                    + " --size, or --thin-pool to measure through a thin pool");
        }
        progress.accept("made " + request.volumeGroup() + "/" + LV_NAME + " (" + (request.sizeBytes() >> 20) + " MiB) in "
                + where);
        return lvm.logicalVolume(request.volumeGroup(), LV_NAME).orElseThrow(() -> DriverException.internal(
                "lvcreate made " + request.volumeGroup() + "/" + LV_NAME + " but lvs does not list it"));
    }

    private static Map<String, String> strings(Map<String, Long> figures) {
        Map<String, String> settings = new LinkedHashMap<>();
        figures.forEach((key, value) -> settings.put(key, Long.toString(value)));
        return settings;
    }

    /** The queue settings a calibration turns off, as they were, to be put back. */
    private record QueueSettings(String merges, Optional<String> scheduler) {

        static QueueSettings turnOff(DiskQueue queue, Consumer<String> progress) throws IOException {
            QueueSettings before = new QueueSettings(queue.merges(), queue.scheduler());
            queue.setMerges(DiskQueue.NO_MERGES);
            if (before.scheduler().isPresent() && !before.scheduler().get().equals("none")) {
                queue.setScheduler("none");
            }
            progress.accept("disk " + queue.disk() + ": merges off (were nomerges=" + before.merges() + "), scheduler"
                    + " none (was " + before.scheduler().orElse("not selectable") + ") while it is measured");
            return before;
        }

        void restore(DiskQueue queue, Consumer<String> progress) {
            try {
                queue.setMerges(merges);
                if (scheduler.isPresent() && !scheduler.get().equals("none")) {
                    queue.setScheduler(scheduler.get());
                }
            } catch (IOException e) {
                progress.accept("could not put back disk " + queue.disk() + "'s queue settings (nomerges=" + merges
                        + ", scheduler " + scheduler.orElse("-") + "): " + e.getMessage() + "; set them by hand");
            }
        }
    }
}
