package io.lvmqos.volume;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The I/O limits a volume carries, as stored with it in its LV tags (per-GiB limits stay per GiB),
 * and what it is guaranteed ({@link Guarantee}: a weight, floors); {@link #forSize} gives the caps
 * in force on a device of a given size. Made by {@link QosParameters} from a StorageClass, changed
 * by a {@link QosChange}.
 */
public record QosSpec(Limit readBps, Limit writeBps, Limit readIops, Limit writeIops, Guarantee guarantee) {

    public static final QosSpec NONE = new QosSpec(Limit.UNLIMITED, Limit.UNLIMITED, Limit.UNLIMITED, Limit.UNLIMITED);

    public QosSpec {
        Objects.requireNonNull(readBps);
        Objects.requireNonNull(writeBps);
        Objects.requireNonNull(readIops);
        Objects.requireNonNull(writeIops);
        Objects.requireNonNull(guarantee);
    }

    /** Caps only, nothing guaranteed. */
    public QosSpec(Limit readBps, Limit writeBps, Limit readIops, Limit writeIops) {
        this(readBps, writeBps, readIops, writeIops, Guarantee.NONE);
    }

    /** The limits in force on a device of this size, within the kernel's bounds ({@link IoLimits}). */
    public IoLimits forSize(long sizeBytes) {
        return IoLimits.within(readBps.forSize(sizeBytes), writeBps.forSize(sizeBytes),
                readIops.forSize(sizeBytes), writeIops.forSize(sizeBytes));
    }

    /** No cap in any direction (a guarantee may still be there). */
    public boolean isUnlimited() {
        return new QosSpec(readBps, writeBps, readIops, writeIops).equals(NONE);
    }

    /** Field name to stored value, for LV tags; unlimited caps and absent guarantees are left out. */
    public Map<String, String> fields() {
        Map<String, String> fields = new LinkedHashMap<>();
        put(fields, "rbps", readBps);
        put(fields, "wbps", writeBps);
        put(fields, "riops", readIops);
        put(fields, "wiops", writeIops);
        fields.putAll(guarantee.fields());
        return fields;
    }

    /** Reads back {@link #fields()}; absent fields are unlimited, or not guaranteed. */
    public static QosSpec fromFields(Map<String, String> fields) {
        return new QosSpec(read(fields, "rbps"), read(fields, "wbps"), read(fields, "riops"), read(fields, "wiops"),
                Guarantee.fromFields(fields));
    }

    /**
     * This spec with what {@code change} names put in place of ours (a lifted cap becomes
     * unlimited, a removed guarantee part goes).
     */
    public QosSpec changedBy(QosChange change) {
        return new QosSpec(change.readBps().orElse(readBps), change.writeBps().orElse(writeBps),
                change.readIops().orElse(readIops), change.writeIops().orElse(writeIops),
                guarantee.changedBy(change.guarantee()));
    }

    private static void put(Map<String, String> fields, String name, Limit limit) {
        if (!(limit instanceof Limit.Unlimited)) {
            fields.put(name, limit.tagValue());
        }
    }

    private static Limit read(Map<String, String> fields, String name) {
        String value = fields.get(name);
        return value == null ? Limit.UNLIMITED : Limit.fromTagValue(value);
    }
}
