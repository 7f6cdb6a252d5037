package io.lvmqos.volume;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.errors.DriverException;
import java.math.BigDecimal;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class QosParametersTest {

    static final long GIB = 1L << 30;

    static Limit fixed(long value) {
        return new Limit.Fixed(value);
    }

    static Limit perGiB(String value) {
        return new Limit.PerGiB(new BigDecimal(value));
    }

    @Test
    void noQosKeysMeansNoLimits() {
        assertEquals(QosSpec.NONE, QosParameters.parse(Map.of("volumeGroup", "vg0")));
    }

    @Test
    void iopsLimitsEachDirectionToTheSameValue() {
        assertEquals(new QosSpec(Limit.UNLIMITED, Limit.UNLIMITED, fixed(300), fixed(300)),
                QosParameters.parse(Map.of("iops", "300")));
    }

    @Test
    void bpsLimitsEachDirectionToTheSameValue() {
        assertEquals(new QosSpec(fixed(52428800), fixed(52428800), Limit.UNLIMITED, Limit.UNLIMITED),
                QosParameters.parse(Map.of("bps", "50Mi")));
    }

    @Test
    void readIopsOverridesIopsForReadsOnly() {
        QosSpec spec = QosParameters.parse(Map.of("iops", "300", "readIOPS", "500"));
        assertEquals(fixed(500), spec.readIops());
        assertEquals(fixed(300), spec.writeIops());
    }

    @Test
    void writeIopsOverridesIopsForWritesOnly() {
        QosSpec spec = QosParameters.parse(Map.of("iops", "300", "writeIOPS", "100"));
        assertEquals(fixed(300), spec.readIops());
        assertEquals(fixed(100), spec.writeIops());
    }

    @Test
    void perDirectionBpsOverrideBps() {
        QosSpec spec = QosParameters.parse(Map.of("bps", "1Mi", "readBPS", "2Mi", "writeBPS", "3Mi"));
        assertEquals(fixed(2 << 20), spec.readBps());
        assertEquals(fixed(3 << 20), spec.writeBps());
    }

    @Test
    void aPerDirectionKeyAloneLeavesTheOtherDirectionUnlimited() {
        assertEquals(new QosSpec(Limit.UNLIMITED, fixed(1000), fixed(200), Limit.UNLIMITED),
                QosParameters.parse(Map.of("readIOPS", "200", "writeBPS", "1k")));
    }

    @Test
    void perGiBKeysApplyToBothDirections() {
        assertEquals(new QosSpec(perGiB("1048576"), perGiB("1048576"), perGiB("10"), perGiB("10")),
                QosParameters.parse(Map.of("iopsPerGiB", "10", "bpsPerGiB", "1Mi")));
    }

    @Test
    void perGiBOfOneKindCombinesWithAbsoluteOfTheOther() {
        assertEquals(new QosSpec(fixed(1 << 20), fixed(1 << 20), perGiB("10"), perGiB("10")),
                QosParameters.parse(Map.of("iopsPerGiB", "10", "bps", "1Mi")));
    }

    @ParameterizedTest(name = "{0} at {1} bytes gives {2}")
    @CsvSource(delimiter = '|', textBlock = """
            10    | 1073741824    | 10
            10    | 1610612736    | 15
            10    | 1073741823    | 9
            10    | 1073741825    | 10
            10    | 104857600     | 1
            3     | 1610612736    | 4
            0.5   | 1073741824    | 1
            0.5   | 3221225472    | 1
            0.5   | 4294967296    | 2
            0.001 | 1099511627776 | 1
            1     | 0             | 1
            2k    | 1099511627776 | 2048000
            """)
    void iopsPerGiBIsFlooredAndAtLeastOne(String iopsPerGiB, long sizeBytes, long expected) {
        IoLimits limits = QosParameters.parse(Map.of("iopsPerGiB", iopsPerGiB)).forSize(sizeBytes);
        assertEquals(OptionalLong.of(expected), limits.readIops());
        assertEquals(OptionalLong.of(expected), limits.writeIops());
    }

    @Test
    void bpsPerGiBScalesWithTheSize() {
        IoLimits limits = QosParameters.parse(Map.of("bpsPerGiB", "1Mi")).forSize(10 * GIB);
        assertEquals(new IoLimits(OptionalLong.of(10 << 20), OptionalLong.of(10 << 20), OptionalLong.empty(),
                OptionalLong.empty()), limits);
    }

    @Test
    void absoluteLimitsDoNotDependOnTheSize() {
        QosSpec spec = QosParameters.parse(Map.of("iops", "300"));
        assertEquals(spec.forSize(GIB), spec.forSize(100 * GIB));
    }

    @ParameterizedTest(name = "{0} with {1}")
    @CsvSource({
            "iopsPerGiB, iops", "iopsPerGiB, readIOPS", "iopsPerGiB, writeIOPS",
            "bpsPerGiB, bps", "bpsPerGiB, readBPS", "bpsPerGiB, writeBPS"})
    void perGiBCannotBeMixedWithAbsoluteOfTheSameKind(String perGiBKey, String absoluteKey) {
        DriverException.InvalidArgument e = assertThrows(DriverException.InvalidArgument.class,
                () -> QosParameters.parse(Map.of(perGiBKey, "10", absoluteKey, "100")));
        assertTrue(e.getMessage().contains(perGiBKey) && e.getMessage().contains(absoluteKey), e.getMessage());
    }

    @ParameterizedTest(name = "{0}=\"{1}\"")
    @CsvSource(delimiter = '|', textBlock = """
            iops       | 0
            iops       | -1
            iops       | 1.5
            iops       | 500m
            iops       | ''
            iops       | abc
            iops       | 1e30
            readIOPS   | 0.1
            writeIOPS  | 10Xi
            bps        | 1.5
            bps        | 0
            bps        | -50Mi
            readBPS    | Mi
            writeBPS   | 1.5.3
            iopsPerGiB | 0
            iopsPerGiB | -1
            iopsPerGiB | ten
            bpsPerGiB  | 0.0
            bpsPerGiB  | ''
            """)
    void refusesAnInvalidValueNamingTheKey(String key, String value) {
        DriverException.InvalidArgument e = assertThrows(DriverException.InvalidArgument.class,
                () -> QosParameters.parse(Map.of(key, value)));
        assertTrue(e.getMessage().contains(key + "=\"" + value + "\""), e.getMessage());
    }

    @ParameterizedTest(name = "iops=\"{0}\" is {1}")
    @CsvSource({"2k, 2000", "1e3, 1000", "1.0, 1", "2000m, 2", "+7, 7"})
    void acceptsWholeIopsInAnyNotation(String value, long expected) {
        assertEquals(fixed(expected), QosParameters.parse(Map.of("iops", value)).readIops());
    }

    @Test
    void acceptsAFractionalBinaryQuantityThatIsAWholeNumberOfBytes() {
        assertEquals(fixed(1536), QosParameters.parse(Map.of("bps", "1.5Ki")).readBps());
    }

    @Test
    void keepsAFractionalPerGiBValue() {
        assertEquals(perGiB("0.5"), QosParameters.parse(Map.of("iopsPerGiB", "0.5")).readIops());
    }

    @Test
    void knowsEachOfItsKeys() {
        for (String key : QosKeys.KEYS) {
            assertTrue(QosParameters.isQosKey(key), key);
        }
    }

    @Test
    void keysAreCaseSensitive() {
        assertFalse(QosParameters.isQosKey("IOPS"));
    }

    @Test
    void aPerGiBLimitThatParsesCanBeComputed() {
        QosSpec spec = QosParameters.parse(Map.of("bpsPerGiB", "1e20"));
        assertDoesNotThrow(() -> spec.forSize(GIB));
    }

    @ParameterizedTest(name = "{0}=max")
    @CsvSource({"iops", "bps", "readIOPS", "writeIOPS", "readBPS", "writeBPS", "iopsPerGiB", "bpsPerGiB"})
    void maxIsNoLimitForEveryKey(String key) {
        assertEquals(QosSpec.NONE, QosParameters.parse(Map.of(key, "max")));
    }

    @Test
    void maxInAPerDirectionKeyOverridesTheBothDirectionLimit() {
        assertEquals(new QosSpec(Limit.UNLIMITED, Limit.UNLIMITED, Limit.UNLIMITED, fixed(300)),
                QosParameters.parse(Map.of("iops", "300", "readIOPS", "max")));
    }

    @Test
    void aPerDirectionLimitOverridesABothDirectionMax() {
        assertEquals(new QosSpec(fixed(1 << 20), Limit.UNLIMITED, Limit.UNLIMITED, Limit.UNLIMITED),
                QosParameters.parse(Map.of("bps", "max", "readBPS", "1Mi")));
    }

    @Test
    void aMutableKeyLeftOutLeavesItsDirectionsAlone() {
        assertEquals(new QosChange(Optional.empty(), Optional.of(fixed(8 << 20)), Optional.empty(), Optional.empty()),
                QosParameters.parseMutable(Map.of("writeBPS", "8Mi")));
        assertEquals(QosChange.NOTHING, QosParameters.parseMutable(Map.of()));
    }

    @Test
    void aMutableMaxLiftsItsDirections() {
        assertEquals(new QosChange(Optional.of(Limit.UNLIMITED), Optional.of(Limit.UNLIMITED), Optional.empty(),
                Optional.of(fixed(100))), QosParameters.parseMutable(Map.of("bps", "max", "writeIOPS", "100")));
        assertEquals(new QosChange(Optional.empty(), Optional.empty(), Optional.of(Limit.UNLIMITED),
                Optional.of(Limit.UNLIMITED)), QosParameters.parseMutable(Map.of("iopsPerGiB", "max")));
    }

    @Test
    void liftingThroughAClassRemovesTheLimitFromTheSpec() {
        QosSpec limited = QosParameters.parse(Map.of("iops", "300", "writeBPS", "4Mi"));
        assertEquals(new QosSpec(Limit.UNLIMITED, Limit.UNLIMITED, fixed(300), fixed(300)),
                limited.changedBy(QosParameters.parseMutable(Map.of("writeBPS", "max"))));
    }

    @ParameterizedTest(name = "{0}=\"{1}\"")
    @CsvSource({"iops, MAX", "bps, Max", "readBPS, unlimited", "iopsPerGiB, 'max '", "writeIOPS, maximum"})
    void onlyTheExactWordMaxMeansNoLimit(String key, String value) {
        DriverException.InvalidArgument e = assertThrows(DriverException.InvalidArgument.class,
                () -> QosParameters.parseMutable(Map.of(key, value)));
        assertTrue(e.getMessage().contains("or max"), e.getMessage());
    }

    @Test
    void maxStillCannotBeMixedWithAPerGiBLimitOfTheSameKind() {
        assertThrows(DriverException.InvalidArgument.class,
                () -> QosParameters.parseMutable(Map.of("iopsPerGiB", "10", "readIOPS", "max")));
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource({"iops, 4294967294, true", "iops, 4294967295, false", "readIOPS, 5e9, false",
            "bps, 9223372036854775807, true", "bps, 9223372036854775808, false"})
    void aFixedLimitMustBeOneTheKernelHolds(String key, String value, boolean accepted) {
        if (accepted) {
            assertDoesNotThrow(() -> QosParameters.parse(Map.of(key, value)));
        } else {
            DriverException.InvalidArgument e = assertThrows(DriverException.InvalidArgument.class,
                    () -> QosParameters.parse(Map.of(key, value)));
            assertTrue(e.getMessage().contains(key + "=\"" + value + "\""), e.getMessage());
        }
    }
}
