package io.lvmqos.guarantee;

import io.lvmqos.cgroup.IoCost;
import io.lvmqos.device.BackingDisks;
import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import io.lvmqos.lvm.Lvm;
import io.lvmqos.volume.DiskCapacity;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Which io.cost model the node plugin trusts for a volume group's disks, and turning io.cost on
 * with it. Trusted are the operator's model (--io-cost-model) and one {@code lvmqos calibrate}
 * measured on the group's disk (its tag, {@link Calibration}); the operator's wins. The kernel's
 * own model is not: it is a guess from the device's kind, which with the vrate pinned can cap the
 * whole disk or promise more than it does (a qemu disk that does 400 IOPS got {@code
 * rrandiops=370 rseqiops=41708}, and weights 3:1 gave 1:1).
 *
 * <p>The capacity floors are admitted against is the model the kernel holds once it took it,
 * scaled by the lowest vrate the QoS lets io.cost use: what io.cost will issue at the least.
 */
public final class IoCostModels {

    /** How far --io-capacity may be from the model's capacity before the group refuses floors. */
    public static final double CAPACITY_MARGIN = 0.10;

    /** The group keeps no guarantee: no trusted model, or one that contradicts the operator. */
    public static final class Untrusted extends RuntimeException {
        Untrusted(String message) {
            super(message);
        }
    }

    public enum Source { OPERATOR, CALIBRATED }

    /**
     * io.cost as turned on for a group.
     *
     * @param model the model as the kernel holds it for the group's (first) disk
     * @param capacity what floors on the group are admitted against
     */
    public record Enabled(Source source, Set<DeviceNumber> disks, CostModel model, Map<String, String> qos,
                          DiskCapacity capacity) {

        @Override
        public String toString() {
            return "disks " + disks + ", model (" + source.name().toLowerCase(java.util.Locale.ROOT) + ") "
                    + model.settings() + ", qos " + qos + ", capacity for floors " + capacity;
        }
    }

    private final Lvm lvm;
    private final BackingDisks backingDisks;
    private final IoCost ioCost;
    private final Path sys;

    public IoCostModels(Lvm lvm, BackingDisks backingDisks, IoCost ioCost, Path sys) {
        this.lvm = lvm;
        this.backingDisks = backingDisks;
        this.ioCost = ioCost;
        this.sys = sys;
    }

    /** What to tell an operator whose group has no model the driver trusts. */
    public static String howToModel(String group) {
        return "run `lvmqos calibrate --volume-group " + group + "` on this node while its disk is idle (chart value"
                + " ioCost.calibrate), or give the disk's model with --io-cost-model=" + group + ":..., then restart the"
                + " plugin";
    }

    /**
     * Turns io.cost on for the group's disks with its trusted model and QoS, and answers what the
     * kernel then holds.
     *
     * @throws Untrusted when there is no trusted model, the calibration is of another disk, or
     *         {@code declared} contradicts the model; io.cost is then left as it was on the disks
     * @throws DriverException when the kernel refuses a setting, or the group is not here
     */
    public Enabled enable(String group, Optional<String> operatorModel, String qos, Optional<DiskCapacity> declared) {
        Set<DeviceNumber> disks = GroupDisks.of(lvm, backingDisks, group).disks();
        Source source;
        String settings;
        if (operatorModel.isPresent()) {
            source = Source.OPERATOR;
            settings = operatorModel.get();
        } else {
            Calibration calibration = Calibration.fromTags(lvm.volumeGroupTags(group)).orElseThrow(() -> new Untrusted(
                    "its disk " + disks + " has no io.cost model lvmqos can trust, so io.cost was left off there: "
                            + howToModel(group)));
            requireSameDisk(group, disks, calibration);
            source = Source.CALIBRATED;
            settings = calibration.model().settings();
        }
        CostModel held = null;
        Map<String, String> qosHeld = Map.of();
        DiskCapacity capacity = null;
        for (DeviceNumber disk : disks) {
            qosHeld = ioCost.enable(disk, Optional.of(settings), qos);
            CostModel model = ioCost.model(disk).flatMap(CostModel::fromSettings).orElseThrow(() ->
                    DriverException.internal("io.cost took a model for disk " + disk + " but io.cost.model shows no"
                            + " complete linear model for it: " + ioCost.model(disk)));
            DiskCapacity diskCapacity = model.capacity(minVrate(qosHeld));
            // a group over several disks promises what its slowest disk can keep
            if (capacity == null || diskCapacity.iops().getAsLong() < capacity.iops().getAsLong()) {
                capacity = diskCapacity;
                held = model;
            }
        }
        if (declared.isPresent() && declared.get().isDeclared()
                && capacity.differenceFrom(declared.get()) > CAPACITY_MARGIN) {
            throw new Untrusted("--io-capacity declares " + declared.get() + " but the disk's io.cost model ("
                    + source.name().toLowerCase(java.util.Locale.ROOT) + ") gives " + capacity + " at the lowest vrate"
                    + " (" + minVrate(qosHeld) + "%), more than " + Math.round(CAPACITY_MARGIN * 100) + "% apart: floors"
                    + " would be admitted against one figure and kept by io.cost to the other. Drop --io-capacity"
                    + " (the model's capacity is used) or correct the model");
        }
        return new Enabled(source, disks, held, qosHeld, capacity);
    }

    private void requireSameDisk(String group, Set<DeviceNumber> disks, Calibration calibration) {
        if (disks.size() != 1) {
            throw new Untrusted("it holds a calibration but now lies on " + disks.size() + " disks " + disks
                    + ", which one model cannot describe: give --io-cost-model=" + group + ":... instead");
        }
        DeviceNumber disk = disks.iterator().next();
        long size;
        try {
            size = new DiskQueue(sys, disk).sizeBytes();
        } catch (IOException e) {
            throw DriverException.internal("cannot read the size of disk " + disk + ": " + e.getMessage(), e);
        }
        if (size != calibration.diskBytes()) {
            throw new Untrusted("its calibration (" + calibration.at() + ") was of a disk of " + calibration.diskBytes()
                    + " bytes, and its disk " + disk + " now has " + size + ": the group moved to another disk, so"
                    + " io.cost was left off there; " + howToModel(group));
        }
    }

    /** The lowest vrate io.cost may use, in percent, from a QoS line as the kernel shows it. */
    static double minVrate(Map<String, String> qos) {
        try {
            return Double.parseDouble(qos.getOrDefault("min", "100"));
        } catch (NumberFormatException e) {
            return 100;
        }
    }
}
