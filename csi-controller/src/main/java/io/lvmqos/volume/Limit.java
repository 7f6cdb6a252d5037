package io.lvmqos.volume;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.OptionalLong;

/** One direction of one kind of I/O limit, as the StorageClass asked for it. */
public sealed interface Limit {

    long GIB = 1L << 30;

    /** The limit in force for a volume of the given size, or empty for no limit. */
    OptionalLong forSize(long sizeBytes);

    /** How this limit is stored in an LV tag value; empty for unlimited. */
    String tagValue();

    Unlimited UNLIMITED = new Unlimited();

    record Unlimited() implements Limit {
        @Override
        public OptionalLong forSize(long sizeBytes) {
            return OptionalLong.empty();
        }

        @Override
        public String tagValue() {
            return "";
        }
    }

    record Fixed(long value) implements Limit {
        public Fixed {
            if (value <= 0) {
                throw new IllegalArgumentException("a limit must be positive: " + value);
            }
        }

        @Override
        public OptionalLong forSize(long sizeBytes) {
            return OptionalLong.of(value);
        }

        @Override
        public String tagValue() {
            return Long.toString(value);
        }
    }

    /** Scales with the volume: floor(perGiB x size / 2^30), at least 1. */
    record PerGiB(BigDecimal perGiB) implements Limit {
        public PerGiB {
            if (perGiB.signum() <= 0) {
                throw new IllegalArgumentException("a per-GiB limit must be positive: " + perGiB);
            }
            perGiB = perGiB.stripTrailingZeros();
        }

        @Override
        public OptionalLong forSize(long sizeBytes) {
            BigDecimal scaled = perGiB.multiply(BigDecimal.valueOf(sizeBytes))
                    .divide(BigDecimal.valueOf(GIB), 0, RoundingMode.FLOOR);
            // beyond any device's speed anyway: saturate rather than overflow
            long value = scaled.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0 ? Long.MAX_VALUE : scaled.longValue();
            return OptionalLong.of(Math.max(1L, value));
        }

        @Override
        public String tagValue() {
            return perGiB.toPlainString() + "/GiB";
        }
    }

    /** Reads back a {@link #tagValue()}. */
    static Limit fromTagValue(String value) {
        if (value.isEmpty()) {
            return UNLIMITED;
        }
        if (value.endsWith("/GiB")) {
            return new PerGiB(new BigDecimal(value.substring(0, value.length() - 4)));
        }
        return new Fixed(Long.parseLong(value));
    }
}
