package io.lvmqos.errors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.lvmqos.fuzz.FuzzReport;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;

/**
 * Fuzzes {@link Echo}, through which every client value reaches a log line or a status message.
 *
 * <p>Property: for any string (lone surrogates, C0 and C1 controls, bidi overrides, line and paragraph
 * separators, private use and unassigned code points included), {@code of} and {@code message}
 * return text with no control, format, surrogate, private-use, unassigned or separator code point,
 * never throw, and stay within their cap ({@value Echo#VALUE_BYTES} and {@value Echo#MESSAGE_BYTES}
 * UTF-8 bytes) plus the short "…(+N bytes, sha256 …)" tail. What {@code of} did not cut decodes back
 * to the value exactly: the escaping loses nothing and forges nothing.
 */
class EchoFuzzTest {

    private static final FuzzReport REPORT = new FuzzReport(EchoFuzzTest.class);
    /** The tail a cut value ends in: "…(+" then at most 10 digits, " bytes, sha256 ", 12 hex digits, ")". */
    private static final int TAIL_BYTES = 3 + 2 + 10 + 15 + 12 + 1;
    private static final Pattern TAIL = Pattern.compile("…\\(\\+(\\d+) bytes, sha256 [0-9a-f]{12}\\)$");
    private static final int[] SPECIAL = {0, 0x1b, '\n', '\r', '\t', 0x7f, 0x85, 0x9b, 0x200e, 0x202e, 0x2028,
            0x2029, 0xfeff, 0xd800, 0xdc00, 0xe000, 0xf8ff, 0x0378, 0x1f600, 0xe0001, 0x10ffff, '\\', '"', 'x', 'u',
            '{', '}', 'é', '€', ' '};

    @FuzzTest
    void neverLetsAControlCharacterOrAnUnboundedLengthThrough(FuzzedDataProvider data) {
        REPORT.count();
        String value = data.consumeBoolean() ? data.consumeRemainingAsString() : codePoints(data);
        String echoed = Echo.of(value);
        assertSafe(echoed, Echo.VALUE_BYTES);
        if (!unescape(echoed).equals(value)) {
            // cut: what is kept is the value's start, and the tail counts the bytes left out
            Matcher tail = TAIL.matcher(echoed);
            assertTrue(tail.find(), () -> "Echo.of(\"" + value + "\") = " + echoed);
            String kept = unescape(echoed.substring(0, tail.start()));
            assertTrue(value.startsWith(kept), () -> "Echo.of(\"" + value + "\") = " + echoed);
            assertEquals(value.substring(kept.length()).getBytes(StandardCharsets.UTF_8).length,
                    Long.parseLong(tail.group(1)), echoed);
        }
        assertSafe(Echo.message(value), Echo.MESSAGE_BYTES);
        assertSafe(Echo.message(echoed), Echo.MESSAGE_BYTES);
    }

    @AfterAll
    static void report() {
        REPORT.write();
    }

    private static void assertSafe(String echoed, int cap) {
        int bytes = echoed.getBytes(StandardCharsets.UTF_8).length;
        assertTrue(bytes <= cap + TAIL_BYTES, () -> "echoed " + bytes + " bytes, cap " + cap);
        for (int i = 0; i < echoed.length(); ) {
            int c = echoed.codePointAt(i);
            boolean bad = switch (Character.getType(c)) {
                case Character.CONTROL, Character.FORMAT, Character.SURROGATE, Character.PRIVATE_USE,
                     Character.UNASSIGNED, Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR -> true;
                default -> false;
            };
            int at = i;
            assertTrue(!bad, () -> String.format("U+%04X at %d of the echo: %s", c, at, echoed));
            i += Character.charCount(c);
        }
    }

    /** A string of code points chosen among the troublesome ones and any other. */
    private static String codePoints(FuzzedDataProvider data) {
        StringBuilder out = new StringBuilder();
        for (int n = data.consumeInt(0, 400); n > 0 && data.remainingBytes() > 0; n--) {
            out.appendCodePoint(data.consumeBoolean() ? data.pickValue(SPECIAL) : data.consumeInt(0, Character.MAX_CODE_POINT));
        }
        return out.toString();
    }

    /** Reverses {@link Echo#of}'s escapes: \n \r \t \\ \xNN \\uNNNN \\u{N}. */
    private static String unescape(String echoed) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < echoed.length(); i++) {
            char c = echoed.charAt(i);
            if (c != '\\') {
                out.append(c);
                continue;
            }
            char kind = echoed.charAt(++i);
            switch (kind) {
                case 'n' -> out.append('\n');
                case 'r' -> out.append('\r');
                case 't' -> out.append('\t');
                case '\\' -> out.append('\\');
                case 'x' -> {
                    out.append((char) Integer.parseInt(echoed.substring(i + 1, i + 3), 16));
                    i += 2;
                }
                case 'u' -> {
                    if (echoed.charAt(i + 1) == '{') {
                        int close = echoed.indexOf('}', i);
                        out.appendCodePoint(Integer.parseInt(echoed.substring(i + 2, close), 16));
                        i = close;
                    } else {
                        out.append((char) Integer.parseInt(echoed.substring(i + 1, i + 5), 16));
                        i += 4;
                    }
                }
                default -> throw new AssertionError("unknown escape \\" + kind + " in " + echoed);
            }
        }
        return out.toString();
    }
}
