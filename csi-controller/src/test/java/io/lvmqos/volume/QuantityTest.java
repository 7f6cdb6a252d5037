package io.lvmqos.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class QuantityTest {

    @ParameterizedTest(name = "\"{0}\" is {1}")
    @CsvSource(delimiter = '|', textBlock = """
            50Mi    | 52428800
            1G      | 1000000000
            2k      | 2000
            1.5     | 1.5
            1e3     | 1000
            1E3     | 1000
            1e+3    | 1000
            1e-3    | 0.001
            1.5e3   | 1500
            1Ki     | 1024
            1.5Ki   | 1536
            1Gi     | 1073741824
            1.5Gi   | 1610612736
            1Ti     | 1099511627776
            1Pi     | 1125899906842624
            1M      | 1000000
            1T      | 1000000000000
            1P      | 1000000000000000
            500m    | 0.5
            0       | 0
            .5      | 0.5
            +5      | 5
            '  7 '  | 7
            """)
    void parsesKubernetesNotation(String text, BigDecimal expected) {
        BigDecimal parsed = Quantity.parse(text).orElseThrow();
        assertEquals(0, expected.compareTo(parsed), () -> text + " parsed as " + parsed);
    }

    @ParameterizedTest(name = "\"{0}\"")
    @ValueSource(strings = {"", " ", "-1", "-1Mi", "1.5.3", "10Xi", "Mi", "abc", ".", "e3", "1e", "1ki", "1K",
            "1 Mi", "1Mi2", "0x10", "1,5", "1e31", "1e-31"})
    void refusesWhatIsNotANonNegativeQuantity(String text) {
        assertEquals(Optional.empty(), Quantity.parse(text));
    }

    @ParameterizedTest(name = "\"{0}\" is {1}")
    @CsvSource({"1E, 1000000000000000000", "1Ei, 1152921504606846976"})
    void parsesTheExaSuffixes(String text, BigDecimal expected) {
        assertEquals(0, expected.compareTo(Quantity.parse(text).orElseThrow()));
    }

    @Test
    void anExponentTooLargeForAnIntIsRefusedNotThrown() {
        assertTrue(Quantity.parse("1e99999999999").isEmpty());
    }
}
