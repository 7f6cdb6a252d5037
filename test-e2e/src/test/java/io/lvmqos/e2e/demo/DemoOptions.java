package io.lvmqos.e2e.demo;

import io.lvmqos.volume.Quantity;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What ./demo was asked for. Limits stay in the StorageClass notation the user typed ({@code 8Mi},
 * {@code 300}), because that text is what the StorageClass carries and what the driver validates;
 * their values are kept beside them for the comparison with what fio measures.
 *
 * @param size each PVC's requested size
 * @param bps the {@code readBPS} and {@code writeBPS} of the bandwidth-limited StorageClass
 * @param iops the {@code iops} of the IOPS-limited StorageClass
 * @param runtimeSeconds how long each fio run measures, after a one-second ramp
 * @param disk the sparse file that holds the node's volume group
 */
public record DemoOptions(Sized size, Sized bps, Sized iops, int runtimeSeconds, Sized disk) {

    /**
     * The longest quantity taken. The largest value any option takes, 1Ti, has 13 digits; 18 characters
     * keep every significand below 10^18, so that ./demo checks the same rules with its shell's
     * 64-bit arithmetic, exactly, before anything slow (DemoScriptTest holds the two together).
     */
    static final int MAX_QUANTITY_LENGTH = 18;

    /** A quantity as typed and its value. */
    public record Sized(String text, long value) {
        static Sized parse(String option, String text, long min, long max, String range) {
            // Quantity.parse ignores blanks around the number; the StorageClass gets the text as typed
            BigDecimal value = Quantity.parse(text).filter(parsed -> text.equals(text.strip()))
                    .orElseThrow(() -> new IllegalArgumentException(
                            option + " " + text + " is not a quantity (e.g. 256Mi, 8Mi, 300, 2Gi)"));
            if (text.length() > MAX_QUANTITY_LENGTH) {
                throw new IllegalArgumentException(option + " " + text + " is too long: a quantity here has at most "
                        + MAX_QUANTITY_LENGTH + " characters");
            }
            if (value.signum() <= 0 || value.stripTrailingZeros().scale() > 0) {
                throw new IllegalArgumentException(option + " " + text + " must be a positive whole number");
            }
            if (value.compareTo(BigDecimal.valueOf(min)) < 0 || value.compareTo(BigDecimal.valueOf(max)) > 0) {
                throw new IllegalArgumentException(option + " " + text + " is out of range: " + range);
            }
            return new Sized(text, value.longValueExact());
        }
    }

    static final long MIB = 1L << 20;
    static final long GIB = 1L << 30;

    static final String DEFAULT_SIZE = "256Mi";
    static final String DEFAULT_BPS = "8Mi";
    static final String DEFAULT_IOPS = "300";
    static final int DEFAULT_RUNTIME = 5;

    public DemoOptions {
        if (disk.value() < 3 * size.value() + 64 * MIB) {
            throw new IllegalArgumentException("--disk " + disk.text() + " cannot hold three volumes of "
                    + size.text() + " (needs at least 3 x size + 64Mi)");
        }
    }

    /** Parses {@code --size 256Mi}, {@code --size=256Mi} and the like; anything unknown is an error. */
    public static DemoOptions parse(List<String> args) {
        String size = DEFAULT_SIZE;
        String bps = DEFAULT_BPS;
        String iops = DEFAULT_IOPS;
        String runtime = Integer.toString(DEFAULT_RUNTIME);
        Optional<String> disk = Optional.empty();
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            String name = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
            if (!List.of("--size", "--bps", "--iops", "--runtime", "--disk").contains(name)) {
                throw new IllegalArgumentException("unknown option " + name);
            }
            String value;
            if (arg.contains("=")) {
                value = arg.substring(arg.indexOf('=') + 1);
            } else if (i + 1 < args.size()) {
                value = args.get(++i);
            } else {
                throw new IllegalArgumentException(arg + " needs a value");
            }
            switch (name) {
                case "--size" -> size = value;
                case "--bps" -> bps = value;
                case "--iops" -> iops = value;
                case "--runtime" -> runtime = value;
                default -> disk = Optional.of(value);
            }
        }
        Sized sizeValue = Sized.parse("--size", size, 64 * MIB, 64 * GIB, "64Mi to 64Gi");
        if (!runtime.matches("\\d{1,3}") || Integer.parseInt(runtime) < 2 || Integer.parseInt(runtime) > 120) {
            throw new IllegalArgumentException("--runtime " + runtime + " must be whole seconds from 2 to 120");
        }
        // Below 1 MiB/s or 20 IOPS a run measures too few I/Os of 1 MiB or 4 KiB to be within 10%.
        return new DemoOptions(sizeValue,
                Sized.parse("--bps", bps, MIB, 4 * GIB, "1Mi to 4Gi"),
                Sized.parse("--iops", iops, 20, 1_000_000, "20 to 1M"),
                Integer.parseInt(runtime),
                Sized.parse("--disk", disk.orElse(defaultDisk(sizeValue.value())), 256 * MIB, 1L << 40, "256Mi to 1Ti"));
    }

    /** Three volumes and room for LVM's metadata, in whole MiB. */
    static String defaultDisk(long sizeBytes) {
        return ((3 * sizeBytes + 128 * MIB + MIB - 1) / MIB) + "Mi";
    }

    /** The same options as arguments, to hand to the guest. */
    public List<String> toArgs() {
        List<String> args = new ArrayList<>();
        args.addAll(List.of("--size", size.text(), "--bps", bps.text(), "--iops", iops.text(),
                "--runtime", Integer.toString(runtimeSeconds), "--disk", disk.text()));
        return args;
    }

    /** The fio data file on each volume: half the volume, at most 128 MiB, in whole MiB. */
    public long fileMebibytes() {
        return Math.min(128, size.value() / MIB / 2);
    }
}
