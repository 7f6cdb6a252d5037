package io.lvmqos.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.lvmqos.fuzz.FuzzReport;
import java.math.BigDecimal;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;

/**
 * Fuzzes {@link Quantity#parse}, the reader of every rate and size a StorageClass, a
 * VolumeAttributesClass or the command line gives.
 *
 * <p>Property: for any text it returns a value or empty, never throws (no NumberFormatException from
 * a mantissa or an exponent, however long), and a value is never negative. A quantity written from
 * a generated number, in plain or scientific notation, with any suffix and blanks around it, parses
 * to exactly that number times the suffix's factor; an exponent beyond 30 either way is refused
 * (empty), as documented.
 */
class QuantityFuzzTest {

    private static final FuzzReport REPORT = new FuzzReport(QuantityFuzzTest.class);
    private static final Map<String, BigDecimal> FACTORS = Map.ofEntries(
            Map.entry("", BigDecimal.ONE),
            Map.entry("Ki", BigDecimal.valueOf(1L << 10)), Map.entry("Mi", BigDecimal.valueOf(1L << 20)),
            Map.entry("Gi", BigDecimal.valueOf(1L << 30)), Map.entry("Ti", BigDecimal.valueOf(1L << 40)),
            Map.entry("Pi", BigDecimal.valueOf(1L << 50)), Map.entry("Ei", BigDecimal.valueOf(1L << 60)),
            Map.entry("k", BigDecimal.TEN.pow(3)), Map.entry("M", BigDecimal.TEN.pow(6)),
            Map.entry("G", BigDecimal.TEN.pow(9)), Map.entry("T", BigDecimal.TEN.pow(12)),
            Map.entry("P", BigDecimal.TEN.pow(15)), Map.entry("E", BigDecimal.TEN.pow(18)),
            Map.entry("m", new BigDecimal("0.001")));
    private static final String[] SUFFIXES = FACTORS.keySet().stream().sorted().toArray(String[]::new);
    private static final String[] BLANKS = {"", " ", "\t", "\n", " \u2003", "\r\n"};

    @FuzzTest
    void readsOrRefusesEveryText(FuzzedDataProvider data) {
        REPORT.count();
        switch (data.consumeInt(0, 2)) {
            case 0 -> assertNonNegativeOrEmpty(data.consumeRemainingAsString());
            case 1 -> {
                String mantissa = mantissa(data);
                String suffix = data.pickValue(SUFFIXES);
                String text = data.pickValue(BLANKS) + mantissa + suffix + data.pickValue(BLANKS);
                BigDecimal expected = new BigDecimal(mantissa.replace("+", "")).multiply(FACTORS.get(suffix));
                assertSame(expected, Quantity.parse(text), text);
            }
            default -> {
                String mantissa = mantissa(data);
                int exponent = data.consumeInt(-1200, 1200);
                String text = mantissa + data.pickValue(new String[] {"e", "E"})
                        + (exponent < 0 ? "-" : data.pickValue(new String[] {"", "+"})) + Math.abs(exponent);
                Optional<BigDecimal> parsed = Quantity.parse(text);
                if (Math.abs(exponent) > 999) {
                    assertEquals(Optional.empty(), parsed, text); // more than the three digits an exponent has
                } else if (Math.abs(exponent) > 30) {
                    assertEquals(Optional.empty(), parsed, text);
                } else {
                    assertSame(new BigDecimal(mantissa.replace("+", "")).scaleByPowerOfTen(exponent), parsed, text);
                }
            }
        }
    }

    @AfterAll
    static void report() {
        REPORT.write();
    }

    private static void assertNonNegativeOrEmpty(String text) {
        Quantity.parse(text).ifPresent(value -> assertTrue(value.signum() >= 0, text + " parsed as " + value));
    }

    private static void assertSame(BigDecimal expected, Optional<BigDecimal> parsed, String text) {
        assertTrue(parsed.isPresent(), () -> "'" + text + "' was refused");
        assertEquals(0, expected.compareTo(parsed.get()), () -> "'" + text + "' parsed as " + parsed.get());
    }

    /** A non-negative decimal as a person writes it: 12, 12.5, 12., .5, +3, with up to 40 digits a side. */
    private static String mantissa(FuzzedDataProvider data) {
        String whole = digits(data, data.consumeInt(0, 40));
        String fraction = digits(data, data.consumeInt(0, 40));
        String sign = data.consumeBoolean() ? "+" : "";
        if (whole.isEmpty() && fraction.isEmpty()) {
            return sign + "0";
        }
        if (whole.isEmpty()) {
            return sign + "." + fraction;
        }
        return sign + whole + (data.consumeBoolean() ? "." + fraction : "");
    }

    private static String digits(FuzzedDataProvider data, int n) {
        StringBuilder out = new StringBuilder(n);
        for (int i = 0; i < n; i++) {
            out.append((char) ('0' + data.consumeInt(0, 9)));
        }
        return out.toString();
    }
}
