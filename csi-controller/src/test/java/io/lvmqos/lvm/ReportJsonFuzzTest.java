package io.lvmqos.lvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.lvmqos.fuzz.FuzzReport;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;

/**
 * Fuzzes {@link ReportJson}, the driver's own reader of lvm's JSON reports.
 *
 * <p>Property: for any text, {@code parse} returns a value or throws IllegalArgumentException itself
 * (no subclass) worded as one of the reader's reasons and ending in "at offset N" with N within the
 * text; never another exception (no
 * StackOverflowError however deep the nesting, no StringIndexOutOfBounds at the end of the text).
 * And a document written from a generated value (objects with unique names, arrays, strings with
 * every kind of escape and any UTF-16 text, numbers, literals, random blanks) parses back to that
 * value, while one nested deeper than the reader's 64 levels is refused.
 *
 * <p>The first byte picks raw text (coverage-guided mutation of the bytes) or a generated
 * document, optionally with one character changed, inserted or removed.
 */
class ReportJsonFuzzTest {

    private static final FuzzReport REPORT = new FuzzReport(ReportJsonFuzzTest.class);
    /** Every refusal the reader words, then its offset: nothing else is a refusal. */
    private static final Pattern REFUSAL = Pattern.compile("(text after the end of the document"
            + "|nested more than 64 levels deep|the document ends where a value was expected|unexpected character '.'"
            + "|expected a member name in quotes|member \".*\" appears twice|a string is not closed"
            + "|a control character inside a string|a string ends in a backslash|unknown escape \\\\."
            + "|\\\\u needs four hex digits|a number needs digits|a fraction needs digits|an exponent needs digits"
            + "|unexpected word|the document ends where '.' was expected|expected '.' but found '.')"
            + " at offset (\\d+)", Pattern.DOTALL);
    private static final int MAX_DEPTH = 64;

    @FuzzTest
    void readsOrRefusesEveryText(FuzzedDataProvider data) {
        REPORT.count();
        switch (data.consumeInt(0, 2)) {
            case 0 -> parseOrRefuse(data.consumeRemainingAsString());
            case 1 -> {
                Object value = value(data, 0);
                for (int wraps = data.consumeInt(0, MAX_DEPTH + 8); wraps > 0; wraps--) {
                    value = data.consumeBoolean() ? List.of(value) : Map.of(data.consumeString(8), value);
                }
                String text = write(data, value);
                if (levels(value) > MAX_DEPTH) {
                    assertRefused(text);
                } else {
                    assertEquals(expected(value), ReportJson.parse(text), text);
                }
            }
            default -> {
                String text = write(data, value(data, 0));
                parseOrRefuse(mutate(data, text));
            }
        }
    }

    @AfterAll
    static void report() {
        REPORT.write();
    }

    private static void parseOrRefuse(String text) {
        try {
            ReportJson.parse(text);
        } catch (IllegalArgumentException e) {
            refusal(e, text);
        }
    }

    private static void assertRefused(String text) {
        try {
            ReportJson.parse(text);
        } catch (IllegalArgumentException e) {
            assertTrue(refusal(e, text).group(1).equals("nested more than " + MAX_DEPTH + " levels deep"), e.getMessage());
            return;
        }
        throw new AssertionError("a document nested deeper than " + MAX_DEPTH + " levels was read: " + text);
    }

    /**
     * The reader's own refusal, exactly: an IllegalArgumentException of that class (not a
     * NumberFormatException or another subclass thrown from inside), worded as one of its reasons,
     * at an offset within the text.
     */
    private static Matcher refusal(IllegalArgumentException e, String text) {
        assertEquals(IllegalArgumentException.class, e.getClass(), e::toString);
        Matcher refusal = REFUSAL.matcher(e.getMessage());
        assertTrue(refusal.matches(), e.getMessage());
        long at = Long.parseLong(refusal.group(2));
        assertTrue(at >= 0 && at <= text.length(), e.getMessage() + " for a text of " + text.length());
        return refusal;
    }

    /** A number as generated, written as its literal; the reader gives back its text. */
    private record Num(String text) {
    }

    /** The deepest level any value sits at: the document is level 0, an element of its array level 1. */
    private static int levels(Object value) {
        if (value instanceof Map<?, ?> map) {
            return map.isEmpty() ? 0 : 1 + map.values().stream().mapToInt(ReportJsonFuzzTest::levels).max().orElseThrow();
        }
        if (value instanceof List<?> list) {
            return list.isEmpty() ? 0 : 1 + list.stream().mapToInt(ReportJsonFuzzTest::levels).max().orElseThrow();
        }
        return 0;
    }

    /** What the reader should make of a generated value: numbers as their text. */
    private static Object expected(Object value) {
        if (value instanceof Map<?, ?> map) {
            Map<Object, Object> out = new LinkedHashMap<>();
            map.forEach((name, member) -> out.put(name, expected(member)));
            return out;
        }
        if (value instanceof List<?> list) {
            return list.stream().map(ReportJsonFuzzTest::expected).toList();
        }
        return value instanceof Num num ? num.text() : value;
    }

    /** A value of at most four levels: deeper documents are made by wrapping one. */
    private static Object value(FuzzedDataProvider data, int depth) {
        int kind = data.consumeInt(0, depth < 4 ? 7 : 5);
        return switch (kind) {
            case 0 -> ReportJson.NULL;
            case 1 -> data.consumeBoolean();
            case 2, 3 -> data.consumeString(40);
            case 4, 5 -> number(data);
            case 6 -> {
                List<Object> elements = new ArrayList<>();
                int n = data.consumeInt(0, 4);
                for (int i = 0; i < n; i++) {
                    elements.add(value(data, depth + 1));
                }
                yield elements;
            }
            default -> {
                Map<String, Object> members = new LinkedHashMap<>();
                int n = data.consumeInt(0, 4);
                for (int i = 0; i < n; i++) {
                    members.putIfAbsent(data.consumeString(12), value(data, depth + 1));
                }
                yield members;
            }
        };
    }

    /** A number in RFC 8259's grammar, as text (the reader keeps numbers as written). */
    private static Num number(FuzzedDataProvider data) {
        StringBuilder n = new StringBuilder();
        if (data.consumeBoolean()) {
            n.append('-');
        }
        long whole = data.consumeLong(0, Long.MAX_VALUE);
        n.append(data.consumeBoolean() ? 0 : whole);
        if (data.consumeBoolean()) {
            n.append('.').append(Long.toUnsignedString(data.consumeLong()));
        }
        if (data.consumeBoolean()) {
            n.append(data.pickValue(new String[] {"e", "E"})).append(data.pickValue(new String[] {"", "+", "-"}))
                    .append(data.consumeInt(0, 400));
        }
        return new Num(n.toString());
    }

    private static String write(FuzzedDataProvider data, Object value) {
        StringBuilder out = new StringBuilder();
        write(data, value, out);
        return blanks(data) + out + blanks(data);
    }

    private static void write(FuzzedDataProvider data, Object value, StringBuilder out) {
        if (value instanceof Map<?, ?> map) {
            out.append('{').append(blanks(data));
            boolean first = true;
            for (Map.Entry<?, ?> member : map.entrySet()) {
                out.append(first ? "" : "," + blanks(data));
                first = false;
                string(data, (String) member.getKey(), out);
                out.append(blanks(data)).append(':').append(blanks(data));
                write(data, member.getValue(), out);
                out.append(blanks(data));
            }
            out.append('}');
        } else if (value instanceof List<?> list) {
            out.append('[').append(blanks(data));
            for (int i = 0; i < list.size(); i++) {
                out.append(i == 0 ? "" : "," + blanks(data));
                write(data, list.get(i), out);
                out.append(blanks(data));
            }
            out.append(']');
        } else if (value instanceof Num number) {
            out.append(number.text());
        } else if (value instanceof String text) {
            string(data, text, out);
        } else {
            out.append(value); // true, false, null
        }
    }

    /** A JSON string for {@code text}: each character as itself where allowed, or one of its escapes. */
    private static void string(FuzzedDataProvider data, String text, StringBuilder out) {
        out.append('"');
        for (char c : text.toCharArray()) {
            boolean mustEscape = c == '"' || c == '\\' || c < 0x20;
            int how = data.consumeInt(0, 3);
            if (!mustEscape && how < 2) {
                out.append(c);
            } else if (how == 2 || c == '"' || c == '\\' || c == '/' || "\b\f\n\r\t".indexOf(c) >= 0) {
                String shortEscape = switch (c) {
                    case '"' -> "\\\"";
                    case '\\' -> "\\\\";
                    case '/' -> "\\/";
                    case '\b' -> "\\b";
                    case '\f' -> "\\f";
                    case '\n' -> "\\n";
                    case '\r' -> "\\r";
                    case '\t' -> "\\t";
                    default -> null;
                };
                out.append(shortEscape != null ? shortEscape : unicodeEscape(data, c));
            } else {
                out.append(unicodeEscape(data, c));
            }
        }
        out.append('"');
    }

    private static String unicodeEscape(FuzzedDataProvider data, char c) {
        String hex = String.format("%04x", (int) c);
        return "\\u" + (data.consumeBoolean() ? hex : hex.toUpperCase());
    }

    private static String blanks(FuzzedDataProvider data) {
        int n = data.consumeInt(0, 3);
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < n; i++) {
            out.append(data.pickValue(new char[] {' ', '\t', '\n', '\r'}));
        }
        return out.toString();
    }

    private static String mutate(FuzzedDataProvider data, String text) {
        int at = data.consumeInt(0, text.length());
        char c = data.consumeChar();
        return switch (data.consumeInt(0, 2)) {
            case 0 -> text.substring(0, at) + c + text.substring(at);
            case 1 -> at < text.length() ? text.substring(0, at) + c + text.substring(at + 1) : text;
            default -> at < text.length() ? text.substring(0, at) + text.substring(at + 1) : text;
        };
    }
}
