package io.lvmqos.controller;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.lvmqos.errors.DriverException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class CapacityRequestTest {

    static final long MIB = 1L << 20;
    static final long GIB = 1L << 30;
    static final long EXTENT = 4 * MIB;

    static CapacityRequest range(long required, long limit) {
        return CapacityRequest.of(Csi.CapacityRange.newBuilder().setRequiredBytes(required).setLimitBytes(limit)
                .build());
    }

    @Test
    void noRangeGivesOneGiB() {
        assertEquals(GIB, CapacityRequest.of(Csi.CapacityRange.getDefaultInstance()).sizeFor(EXTENT));
    }

    @ParameterizedTest(name = "required {0}, limit {1}, extent {2} -> {3}")
    @CsvSource({
            // exact multiples are kept
            "104857600, 0, 4194304, 104857600",
            // rounded up to the next extent
            "1, 0, 4194304, 4194304",
            "104857601, 0, 4194304, 109051904",
            "1000000000, 0, 4194304, 1002438656",
            "5000000, 10000000, 4194304, 8388608",
            // a limit alone caps the 1 GiB default
            "0, 104857600, 4194304, 104857600",
            "0, 2147483648, 4194304, 1073741824",
            // the rounded-up default passes the limit, a rounded-down size fits
            "0, 10485761, 4194304, 8388608",
            // the limit is itself a multiple of the extent
            "104857601, 109051904, 4194304, 109051904",
            // a larger extent
            "1, 0, 33554432, 33554432"})
    void sizeIsRoundedToTheExtentWithinTheRange(long required, long limit, long extent, long expected) {
        assertEquals(expected, range(required, limit).sizeFor(extent));
    }

    @ParameterizedTest(name = "required {0}, limit {1}, extent {2}")
    @CsvSource({
            "5000000, 6000000, 4194304",
            "0, 1000000, 4194304",
            "4194305, 8388607, 4194304"})
    void noWholeNumberOfExtentsInTheRangeIsOutOfRange(long required, long limit, long extent) {
        assertThrows(DriverException.OutOfRange.class, () -> range(required, limit).sizeFor(extent));
    }

    @Test
    void requiredAboveLimitIsInvalid() {
        assertThrows(DriverException.InvalidArgument.class, () -> range(2 * GIB, GIB));
    }

    @ParameterizedTest(name = "required {0}, limit {1}")
    @CsvSource({"-1, 0", "0, -1", "-1, -1"})
    void negativeBytesAreInvalid(long required, long limit) {
        assertThrows(DriverException.InvalidArgument.class, () -> range(required, limit));
    }

    @Test
    void requiredEqualToLimitIsFine() {
        assertEquals(GIB, range(GIB, GIB).sizeFor(EXTENT));
    }

    @ParameterizedTest(name = "required {0}, limit {1}, size {2}")
    @CsvSource({"0, 0, 1", "1073741824, 0, 1073741824", "1073741824, 0, 2147483648", "0, 1073741824, 1073741824",
            "1000, 2000, 1500"})
    void acceptsASizeWithinTheRange(long required, long limit, long size) {
        assertTrue(range(required, limit).accepts(size));
    }

    @ParameterizedTest(name = "required {0}, limit {1}, size {2}")
    @CsvSource({"1073741824, 0, 1073741823", "0, 1073741824, 1073741825", "1000, 2000, 999", "1000, 2000, 2001"})
    void refusesASizeOutsideTheRange(long required, long limit, long size) {
        assertFalse(range(required, limit).accepts(size));
    }

    @Test
    void aRequiredSizeTooLargeToRoundUpIsOutOfRange() {
        assertThrows(DriverException.OutOfRange.class, () -> range(Long.MAX_VALUE, 0).sizeFor(EXTENT));
    }
}
