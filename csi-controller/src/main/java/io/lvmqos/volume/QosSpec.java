package io.lvmqos.volume;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/** The I/O limits a volume carries, as stored with it; {@link #forSize} gives the numbers in force. */
public record QosSpec(Limit readBps, Limit writeBps, Limit readIops, Limit writeIops) {

    public static final QosSpec NONE = new QosSpec(Limit.UNLIMITED, Limit.UNLIMITED, Limit.UNLIMITED, Limit.UNLIMITED);

    public QosSpec {
        Objects.requireNonNull(readBps);
        Objects.requireNonNull(writeBps);
        Objects.requireNonNull(readIops);
        Objects.requireNonNull(writeIops);
    }

    /** The largest IOPS limit the kernel takes (io.max and blkio keep IOPS in 32 bits). */
    public static final long MAX_IOPS = 0xffff_fffeL;

    public IoLimits forSize(long sizeBytes) {
        return new IoLimits(readBps.forSize(sizeBytes), writeBps.forSize(sizeBytes),
                capIops(readIops.forSize(sizeBytes)), capIops(writeIops.forSize(sizeBytes)));
    }

    private static java.util.OptionalLong capIops(java.util.OptionalLong iops) {
        return iops.isPresent() && iops.getAsLong() > MAX_IOPS ? java.util.OptionalLong.of(MAX_IOPS) : iops;
    }

    public boolean isUnlimited() {
        return equals(NONE);
    }

    /** Field name to stored value, for LV tags and volume_context; unlimited fields are left out. */
    public Map<String, String> fields() {
        Map<String, String> fields = new LinkedHashMap<>();
        put(fields, "rbps", readBps);
        put(fields, "wbps", writeBps);
        put(fields, "riops", readIops);
        put(fields, "wiops", writeIops);
        return fields;
    }

    /** Reads back {@link #fields()}; absent fields are unlimited. */
    public static QosSpec fromFields(Map<String, String> fields) {
        return new QosSpec(read(fields, "rbps"), read(fields, "wbps"), read(fields, "riops"), read(fields, "wiops"));
    }

    /** This spec with the limits of {@code change} that are not unlimited put in place of ours. */
    public QosSpec overriddenBy(QosSpec change) {
        return new QosSpec(pick(change.readBps, readBps), pick(change.writeBps, writeBps),
                pick(change.readIops, readIops), pick(change.writeIops, writeIops));
    }

    private static Limit pick(Limit preferred, Limit fallback) {
        return preferred instanceof Limit.Unlimited ? fallback : preferred;
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
