package io.lvmqos.errors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/** Values from a client, as they appear in a log line or an error message: one line, bounded, unambiguous. */
class EchoTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '\'', textBlock = """
            # what                  | code points of the value | echoed
            plain                   | 0x70,0x76,0x63,0x2d,0x31 | pvc-1
            newline                 | 0x61,0x0a,0x62           | 'a\\nb'
            carriage return and tab | 0x0d,0x09               | '\\r\\t'
            escape and NUL          | 0x1b,0x00                | '\\x1b\\x00'
            DEL                     | 0x7f                     | '\\x7f'
            a backslash             | 0x61,0x5c,0x6e           | 'a\\\\n'
            C1 next line            | 0x0085                   | '\\u0085'
            line separator          | 0x2028                   | '\\u2028'
            right-to-left override  | 0x202e                   | '\\u202e'
            zero width space        | 0x200b                   | '\\u200b'
            lone surrogate          | 0xd800                   | '\\ud800'
            private use             | 0xe000                   | '\\ue000'
            printable unicode       | 0xe9,0x4e2d,0x1f600      | 'é中😀'
            """)
    void escapesWhatCouldSplitOrDisguiseALine(String what, String codePoints, String echoed) {
        StringBuilder value = new StringBuilder();
        for (String codePoint : codePoints.split(",")) {
            value.appendCodePoint(Integer.decode(codePoint.strip()));
        }

        assertEquals(echoed, Echo.of(value.toString()), what);
    }

    @Test
    void aValueOfAtMost256BytesIsKeptWhole() {
        String value = "v".repeat(256);

        assertEquals(value, Echo.of(value));
    }

    @Test
    void aLongerValueIsCutAt256BytesAndNamedByItsLengthAndHash() throws Exception {
        String value = "x".repeat(4096);
        String hash = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                .digest(value.getBytes(StandardCharsets.UTF_8))).substring(0, 12);

        assertEquals("x".repeat(256) + "…(+3840 bytes, sha256 " + hash + ")", Echo.of(value));
    }

    @Test
    void theCapCountsTheEscapedFormAndNeverSplitsAnEscapeOrACharacter() {
        String echoed = Echo.of("\n".repeat(200) + "é".repeat(200));

        String kept = echoed.substring(0, echoed.indexOf('…'));
        assertTrue(kept.getBytes(StandardCharsets.UTF_8).length <= 256, kept);
        assertTrue(kept.startsWith("\\n") && kept.endsWith("\\n"), kept);
        // 128 newlines fit as "\n" escapes: 72 newlines and 200 two-byte characters are left out
        assertTrue(echoed.endsWith("…(+472 bytes, sha256 " + echoed.substring(echoed.length() - 13)), echoed);
    }

    @Test
    void aMessageKeepsItsBackslashesButLosesItsControls() {
        assertEquals("name a\\nb is not valid\\x1b", Echo.message("name " + Echo.of("a\nb") + " is not valid\u001b"));
    }

    @Test
    void aMessageIsCappedToo() {
        String message = Echo.message("volume " + "y".repeat(10_000) + " does not exist");

        assertTrue(message.getBytes(StandardCharsets.UTF_8).length < 2200, message);
        assertFalse(message.contains("\n"));
        assertTrue(message.contains("…(+"), message);
    }
}
