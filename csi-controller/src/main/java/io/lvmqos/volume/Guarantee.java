package io.lvmqos.volume;

import io.lvmqos.errors.DriverException;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * What a volume is promised beyond its caps: a share of its disk under contention (an io.cost
 * weight) and floors, the least it keeps while others saturate the same disk. Stored in the LV's
 * tags beside the caps ({@link QosSpec}); made by {@link QosParameters}.
 *
 * <p>A floor is a rate the pod keeps under contention, in I/O operations or bytes per second; the
 * node turns the floors on a disk into io.cost weights along the pod's cgroup path. io.cost shares
 * time on the device, not directions, so what a floor costs the device is the sum of its
 * directions: {@link #iopsNeeded()} and {@link #bpsNeeded()}.
 *
 * @param weight the pod's io.cost weight on the volume's disk; empty leaves the cgroup's default
 * @param iopsFloor reads and writes together; refused beside the per-direction floors
 */
public record Guarantee(Optional<IoCostWeight> weight, OptionalLong readIopsFloor, OptionalLong writeIopsFloor,
                        OptionalLong iopsFloor, OptionalLong readBpsFloor, OptionalLong writeBpsFloor,
                        OptionalLong bpsFloor) {

    public static final Guarantee NONE = new Guarantee(Optional.empty(), OptionalLong.empty(), OptionalLong.empty(),
            OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty());

    // tag field names, under VolumeTags.QOS_PREFIX like the caps'
    static final String WEIGHT_FIELD = "weight";
    static final String READ_IOPS_FLOOR_FIELD = "friops";
    static final String WRITE_IOPS_FLOOR_FIELD = "fwiops";
    static final String IOPS_FLOOR_FIELD = "fiops";
    static final String READ_BPS_FLOOR_FIELD = "frbps";
    static final String WRITE_BPS_FLOOR_FIELD = "fwbps";
    static final String BPS_FLOOR_FIELD = "fbps";
    static final List<String> FIELDS = List.of(WEIGHT_FIELD, READ_IOPS_FLOOR_FIELD, WRITE_IOPS_FLOOR_FIELD,
            IOPS_FLOOR_FIELD, READ_BPS_FLOOR_FIELD, WRITE_BPS_FLOOR_FIELD, BPS_FLOOR_FIELD);

    public Guarantee {
        Objects.requireNonNull(weight);
        for (OptionalLong floor : List.of(readIopsFloor, writeIopsFloor, iopsFloor, readBpsFloor, writeBpsFloor, bpsFloor)) {
            if (floor.isPresent() && floor.getAsLong() <= 0) {
                throw new IllegalArgumentException("a floor must be positive: " + floor.getAsLong());
            }
        }
    }

    public boolean isNone() {
        return equals(NONE);
    }

    public boolean hasFloor() {
        return iopsNeeded() > 0 || bpsNeeded() > 0;
    }

    /** The I/O operations per second the floors hold for this volume, both directions together. */
    public long iopsNeeded() {
        return needed(iopsFloor, readIopsFloor, writeIopsFloor);
    }

    /** The bytes per second the floors hold for this volume, both directions together. */
    public long bpsNeeded() {
        return needed(bpsFloor, readBpsFloor, writeBpsFloor);
    }

    /**
     * The larger of the floor for both directions and the per-direction ones together. The two kinds
     * are refused side by side ({@link #requireConsistent}), but a change of a VolumeAttributesClass
     * is only checked once merged, and LV tags may hold what someone else wrote: the floor for both
     * directions alone once hid a larger per-direction one (found by QosParametersFuzzTest).
     */
    private static long needed(OptionalLong bothDirections, OptionalLong read, OptionalLong write) {
        return Math.max(bothDirections.orElse(0), both(read, write));
    }

    /**
     * A read and a write floor together. Byte floors may each be up to a long's largest value, so
     * their sum saturates there: wrapped around to a negative, it once read as no floor at all and
     * skipped admission (found by QosParametersFuzzTest).
     */
    private static long both(OptionalLong read, OptionalLong write) {
        long total = read.orElse(0) + write.orElse(0);
        return total < 0 ? Long.MAX_VALUE : total;
    }

    /**
     * Refuses what cannot be kept: a floor beside the floors of the same kind it would overlap, or a
     * floor above the volume's own cap in the same direction (the cap would win, and the promise
     * would be false). {@code caps} are the limits in force on the volume at its size.
     */
    public void requireConsistent(IoLimits caps) {
        refuseMix(iopsFloor, QosKeys.IOPS_FLOOR, readIopsFloor, writeIopsFloor, QosKeys.READ_IOPS_FLOOR,
                QosKeys.WRITE_IOPS_FLOOR);
        refuseMix(bpsFloor, QosKeys.BPS_FLOOR, readBpsFloor, writeBpsFloor, QosKeys.READ_BPS_FLOOR,
                QosKeys.WRITE_BPS_FLOOR);
        aboveCap(readIopsFloor, caps.readIops(), QosKeys.READ_IOPS_FLOOR, QosKeys.READ_IOPS);
        aboveCap(writeIopsFloor, caps.writeIops(), QosKeys.WRITE_IOPS_FLOOR, QosKeys.WRITE_IOPS);
        aboveCap(readBpsFloor, caps.readBps(), QosKeys.READ_BPS_FLOOR, QosKeys.READ_BPS);
        aboveCap(writeBpsFloor, caps.writeBps(), QosKeys.WRITE_BPS_FLOOR, QosKeys.WRITE_BPS);
        aboveCap(iopsFloor, sum(caps.readIops(), caps.writeIops()), QosKeys.IOPS_FLOOR,
                QosKeys.READ_IOPS + " + " + QosKeys.WRITE_IOPS);
        aboveCap(bpsFloor, sum(caps.readBps(), caps.writeBps()), QosKeys.BPS_FLOOR,
                QosKeys.READ_BPS + " + " + QosKeys.WRITE_BPS);
    }

    private static void refuseMix(OptionalLong both, String bothKey, OptionalLong read, OptionalLong write,
                                  String readKey, String writeKey) {
        if (both.isPresent() && (read.isPresent() || write.isPresent())) {
            throw DriverException.invalidArgument("parameter " + bothKey + " cannot be combined with "
                    + (read.isPresent() ? readKey : writeKey) + ": give either one floor for reads and writes together"
                    + " or a floor per direction");
        }
    }

    private static void aboveCap(OptionalLong floor, OptionalLong cap, String floorKey, String capKeys) {
        if (floor.isPresent() && cap.isPresent() && floor.getAsLong() > cap.getAsLong()) {
            throw DriverException.invalidArgument("parameter " + floorKey + "=" + floor.getAsLong() + " is above the"
                    + " volume's cap in that direction (" + capKeys + " = " + cap.getAsLong() + "): a floor the cap"
                    + " keeps the pod from reaching would be a false promise; lower the floor or raise the cap");
        }
    }

    /** Both directions' caps together; no cap when either direction has none. */
    private static OptionalLong sum(OptionalLong read, OptionalLong write) {
        if (read.isEmpty() || write.isEmpty()) {
            return OptionalLong.empty();
        }
        long total = read.getAsLong() + write.getAsLong();
        return OptionalLong.of(total < 0 ? Long.MAX_VALUE : total);
    }

    /** Field name to stored value, for LV tags; absent fields are left out. */
    Map<String, String> fields() {
        Map<String, String> fields = new LinkedHashMap<>();
        weight.ifPresent(w -> fields.put(WEIGHT_FIELD, w.toString()));
        put(fields, READ_IOPS_FLOOR_FIELD, readIopsFloor);
        put(fields, WRITE_IOPS_FLOOR_FIELD, writeIopsFloor);
        put(fields, IOPS_FLOOR_FIELD, iopsFloor);
        put(fields, READ_BPS_FLOOR_FIELD, readBpsFloor);
        put(fields, WRITE_BPS_FLOOR_FIELD, writeBpsFloor);
        put(fields, BPS_FLOOR_FIELD, bpsFloor);
        return fields;
    }

    /** Reads back {@link #fields()}; fields of other kinds are ignored. */
    static Guarantee fromFields(Map<String, String> fields) {
        String weight = fields.get(WEIGHT_FIELD);
        return new Guarantee(Optional.ofNullable(weight).map(IoCostWeight::parse),
                read(fields, READ_IOPS_FLOOR_FIELD), read(fields, WRITE_IOPS_FLOOR_FIELD), read(fields, IOPS_FLOOR_FIELD),
                read(fields, READ_BPS_FLOOR_FIELD), read(fields, WRITE_BPS_FLOOR_FIELD), read(fields, BPS_FLOOR_FIELD));
    }

    /** The parts of a guarantee a VolumeAttributesClass sets or takes away one by one. */
    public enum Part {
        WEIGHT, READ_IOPS_FLOOR, WRITE_IOPS_FLOOR, IOPS_FLOOR, READ_BPS_FLOOR, WRITE_BPS_FLOOR, BPS_FLOOR
    }

    /**
     * A change of a guarantee: the parts {@code set} has replace ours, the parts in {@code cleared}
     * go, the others stay. A part both set and cleared is refused.
     */
    public record Change(Guarantee set, Set<Part> cleared) {

        public static final Change NONE = new Change(Guarantee.NONE, Set.of());

        public Change {
            Objects.requireNonNull(set);
            cleared = cleared.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(cleared));
            for (Part part : cleared) {
                if (set.value(part).isPresent()) {
                    throw new IllegalArgumentException("guarantee part " + part + " is both set and taken away");
                }
            }
        }

        public boolean isEmpty() {
            return set.isNone() && cleared.isEmpty();
        }
    }

    /** This guarantee with {@code change} merged in, part by part. */
    Guarantee changedBy(Change change) {
        Guarantee set = change.set();
        Set<Part> cleared = change.cleared();
        return new Guarantee(
                cleared.contains(Part.WEIGHT) ? Optional.empty() : set.weight().or(() -> weight),
                merged(Part.READ_IOPS_FLOOR, cleared, set.readIopsFloor(), readIopsFloor),
                merged(Part.WRITE_IOPS_FLOOR, cleared, set.writeIopsFloor(), writeIopsFloor),
                merged(Part.IOPS_FLOOR, cleared, set.iopsFloor(), iopsFloor),
                merged(Part.READ_BPS_FLOOR, cleared, set.readBpsFloor(), readBpsFloor),
                merged(Part.WRITE_BPS_FLOOR, cleared, set.writeBpsFloor(), writeBpsFloor),
                merged(Part.BPS_FLOOR, cleared, set.bpsFloor(), bpsFloor));
    }

    private static OptionalLong merged(Part part, Set<Part> cleared, OptionalLong set, OptionalLong ours) {
        if (cleared.contains(part)) {
            return OptionalLong.empty();
        }
        return set.isPresent() ? set : ours;
    }

    /** The part's value as a number (a weight's value, a floor's rate); empty when this guarantee has none. */
    public OptionalLong value(Part part) {
        return switch (part) {
            case WEIGHT -> weight.map(w -> OptionalLong.of(w.value())).orElse(OptionalLong.empty());
            case READ_IOPS_FLOOR -> readIopsFloor;
            case WRITE_IOPS_FLOOR -> writeIopsFloor;
            case IOPS_FLOOR -> iopsFloor;
            case READ_BPS_FLOOR -> readBpsFloor;
            case WRITE_BPS_FLOOR -> writeBpsFloor;
            case BPS_FLOOR -> bpsFloor;
        };
    }

    private static void put(Map<String, String> fields, String name, OptionalLong value) {
        value.ifPresent(v -> fields.put(name, Long.toString(v)));
    }

    private static OptionalLong read(Map<String, String> fields, String name) {
        String value = fields.get(name);
        return value == null ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(value));
    }

    @Override
    public String toString() {
        return fields().toString();
    }
}
