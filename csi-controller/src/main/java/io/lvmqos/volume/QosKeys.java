package io.lvmqos.volume;

import java.util.List;
import java.util.stream.Stream;

/**
 * The StorageClass and VolumeAttributesClass keys that set a volume's caps and guarantees, and the
 * two values that take one away: named here, read by {@link QosParameters}, and quoted in the
 * messages of the values they set ({@link Guarantee}).
 */
public final class QosKeys {

    public static final String IOPS = "iops";
    public static final String BPS = "bps";
    public static final String READ_IOPS = "readIOPS";
    public static final String WRITE_IOPS = "writeIOPS";
    public static final String READ_BPS = "readBPS";
    public static final String WRITE_BPS = "writeBPS";
    public static final String IOPS_PER_GIB = "iopsPerGiB";
    public static final String BPS_PER_GIB = "bpsPerGiB";

    public static final String IO_WEIGHT = "ioWeight";
    public static final String IOPS_FLOOR = "iopsFloor";
    public static final String READ_IOPS_FLOOR = "readIOPSFloor";
    public static final String WRITE_IOPS_FLOOR = "writeIOPSFloor";
    public static final String BPS_FLOOR = "bpsFloor";
    public static final String READ_BPS_FLOOR = "readBPSFloor";
    public static final String WRITE_BPS_FLOOR = "writeBPSFloor";

    /** The value that means "no limit", as io.max writes it. */
    public static final String NO_LIMIT = "max";
    /** The value that takes a weight or a floor away. */
    public static final String NO_GUARANTEE = "none";

    public static final List<String> CAP_KEYS =
            List.of(IOPS, BPS, READ_IOPS, WRITE_IOPS, READ_BPS, WRITE_BPS, IOPS_PER_GIB, BPS_PER_GIB);
    public static final List<String> GUARANTEE_KEYS =
            List.of(IO_WEIGHT, IOPS_FLOOR, READ_IOPS_FLOOR, WRITE_IOPS_FLOOR, BPS_FLOOR, READ_BPS_FLOOR, WRITE_BPS_FLOOR);
    public static final List<String> KEYS = Stream.concat(CAP_KEYS.stream(), GUARANTEE_KEYS.stream()).toList();

    private QosKeys() {
    }
}
