package io.lvmqos.lvm;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A strict reader of RFC 8259 JSON, for lvm's {@code --reportformat json} output: objects become
 * maps in document order, arrays lists, strings strings, numbers their literal text, true and false
 * Booleans, null {@link #NULL}. It is this small on purpose: a general JSON library loaded only
 * for lvm's reports cost the driver about 370 classes at start. Malformed text is refused with
 * the offset of the first error, never guessed at.
 */
final class ReportJson {

    /** JSON's null, which a map cannot hold as a value. */
    static final Object NULL = new Object() {
        @Override
        public String toString() {
            return "null";
        }
    };

    /** Nesting deeper than lvm ever writes (three levels) is refused rather than recursed into. */
    private static final int MAX_DEPTH = 64;

    private final String text;
    private int at;

    private ReportJson(String text) {
        this.text = text;
    }

    /** The value of a whole document. */
    static Object parse(String text) {
        ReportJson reader = new ReportJson(text);
        reader.skipBlanks();
        Object value = reader.value(0);
        reader.skipBlanks();
        if (reader.at != text.length()) {
            throw reader.error("text after the end of the document");
        }
        return value;
    }

    private Object value(int depth) {
        if (depth > MAX_DEPTH) {
            throw error("nested more than " + MAX_DEPTH + " levels deep");
        }
        if (at >= text.length()) {
            throw error("the document ends where a value was expected");
        }
        char c = text.charAt(at);
        return switch (c) {
            case '{' -> object(depth);
            case '[' -> array(depth);
            case '"' -> string();
            case 't' -> literal("true", Boolean.TRUE);
            case 'f' -> literal("false", Boolean.FALSE);
            case 'n' -> literal("null", NULL);
            default -> {
                if (c == '-' || (c >= '0' && c <= '9')) {
                    yield number();
                }
                throw error("unexpected character '" + c + "'");
            }
        };
    }

    private Map<String, Object> object(int depth) {
        at++; // {
        Map<String, Object> members = new LinkedHashMap<>();
        skipBlanks();
        if (peek() == '}') {
            at++;
            return Collections.unmodifiableMap(members);
        }
        while (true) {
            skipBlanks();
            if (peek() != '"') {
                throw error("expected a member name in quotes");
            }
            String name = string();
            skipBlanks();
            expect(':');
            skipBlanks();
            if (members.put(name, value(depth + 1)) != null) {
                throw error("member \"" + name + "\" appears twice");
            }
            skipBlanks();
            if (peek() == ',') {
                at++;
            } else {
                expect('}');
                return Collections.unmodifiableMap(members);
            }
        }
    }

    private List<Object> array(int depth) {
        at++; // [
        List<Object> elements = new ArrayList<>();
        skipBlanks();
        if (peek() == ']') {
            at++;
            return Collections.unmodifiableList(elements);
        }
        while (true) {
            skipBlanks();
            elements.add(value(depth + 1));
            skipBlanks();
            if (peek() == ',') {
                at++;
            } else {
                expect(']');
                return Collections.unmodifiableList(elements);
            }
        }
    }

    private String string() {
        at++; // opening quote
        StringBuilder out = null;
        int start = at;
        while (true) {
            if (at >= text.length()) {
                throw error("a string is not closed");
            }
            char c = text.charAt(at);
            if (c == '"') {
                String value = out == null ? text.substring(start, at) : out.append(text, start, at).toString();
                at++;
                return value;
            }
            if (c < 0x20) {
                throw error("a control character inside a string");
            }
            if (c != '\\') {
                at++;
                continue;
            }
            if (out == null) {
                out = new StringBuilder();
            }
            out.append(text, start, at);
            at++;
            if (at >= text.length()) {
                throw error("a string ends in a backslash");
            }
            char escaped = text.charAt(at++);
            switch (escaped) {
                case '"', '\\', '/' -> out.append(escaped);
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'n' -> out.append('\n');
                case 'r' -> out.append('\r');
                case 't' -> out.append('\t');
                case 'u' -> out.append(hexUnit());
                default -> {
                    at--;
                    throw error("unknown escape \\" + escaped);
                }
            }
            start = at;
        }
    }

    private char hexUnit() {
        if (at + 4 > text.length()) {
            throw error("\\u needs four hex digits");
        }
        int unit = 0;
        for (int i = 0; i < 4; i++) {
            int digit = Character.digit(text.charAt(at), 16);
            if (digit < 0) {
                throw error("\\u needs four hex digits");
            }
            unit = unit * 16 + digit;
            at++;
        }
        return (char) unit;
    }

    /** A number as written: lvm's numbers are sizes and percentages the caller parses as it needs. */
    private String number() {
        int start = at;
        if (peek() == '-') {
            at++;
        }
        if (peek() == '0') {
            at++;
        } else if (!digits()) {
            throw error("a number needs digits");
        }
        if (peek() == '.') {
            at++;
            if (!digits()) {
                throw error("a fraction needs digits");
            }
        }
        if (peek() == 'e' || peek() == 'E') {
            at++;
            if (peek() == '+' || peek() == '-') {
                at++;
            }
            if (!digits()) {
                throw error("an exponent needs digits");
            }
        }
        return text.substring(start, at);
    }

    private boolean digits() {
        int start = at;
        while (at < text.length() && text.charAt(at) >= '0' && text.charAt(at) <= '9') {
            at++;
        }
        return at > start;
    }

    private Object literal(String word, Object value) {
        if (!text.startsWith(word, at)) {
            throw error("unexpected word");
        }
        at += word.length();
        return value;
    }

    private void expect(char c) {
        if (peek() != c) {
            throw error(at >= text.length() ? "the document ends where '" + c + "' was expected"
                    : "expected '" + c + "' but found '" + text.charAt(at) + "'");
        }
        at++;
    }

    /** The next character, or NUL at the end (NUL never starts a valid token). */
    private char peek() {
        return at < text.length() ? text.charAt(at) : '\0';
    }

    private void skipBlanks() {
        while (at < text.length()) {
            char c = text.charAt(at);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            at++;
        }
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException(what + " at offset " + at);
    }
}
