package io.lvmqos.kube;

import java.io.IOException;
import java.io.Reader;

/**
 * A strict streaming reader of RFC 8259 JSON, for the API server's lists and watch events: the
 * caller walks the members it wants and {@link #skip}s the rest, which are scanned without
 * building a string or a map. A page of 250 PersistentVolumes is about 600 KB of JSON of which the
 * watcher keeps five short strings per volume; csi-controller's lvm report reader
 * ({@code ReportJson}) builds the whole tree from a string, which suits lvm's small reports and
 * not this. Several documents may follow one another (a watch stream is one per line).
 *
 * <p>Malformed text is refused with the offset of the first error (a {@link Malformed}, an
 * {@link IOException}: it ends a connection, not the process).
 */
final class JsonStream {

    /** The text is not JSON, or not of the shape the caller asked for. */
    static final class Malformed extends IOException {
        Malformed(String message) {
            super(message);
        }
    }

    /** Reads one member's value; it must read or skip that value exactly once. */
    @FunctionalInterface
    interface Members {
        void member(String name) throws IOException;
    }

    /** Nesting deeper than any Kubernetes object (about 10 levels) is refused rather than recursed into. */
    private static final int MAX_DEPTH = 64;
    /** A kept string (a name, a handle, a parameter) longer than this is refused, not buffered. */
    static final int MAX_STRING = 64 * 1024;

    private final Reader in;
    private final String what;
    private final char[] buffer = new char[4096];
    private int at;
    private int end;
    private long consumed;
    private int depth;

    /** @param what names the text in errors: "the list of persistentvolumes", say */
    JsonStream(Reader in, String what) {
        this.in = in;
        this.what = what;
    }

    /** Whether another document follows (blanks between documents are skipped). */
    boolean more() throws IOException {
        skipBlanks();
        return peek() >= 0;
    }

    /** Reads an object, handing each member's name to {@code members}; a JSON null reads as an empty object. */
    void object(Members members) throws IOException {
        skipBlanks();
        if (peek() == 'n') {
            literal("null");
            return;
        }
        expect('{');
        enter();
        skipBlanks();
        if (peek() == '}') {
            at++;
            depth--;
            return;
        }
        while (true) {
            skipBlanks();
            if (peek() != '"') {
                throw error("expected a member name in quotes");
            }
            String name = string();
            skipBlanks();
            expect(':');
            members.member(name);
            skipBlanks();
            if (peek() == ',') {
                at++;
            } else {
                expect('}');
                depth--;
                return;
            }
        }
    }

    /** Reads an array, calling {@code element} once per element to read it; null reads as empty. */
    void array(IoAction element) throws IOException {
        skipBlanks();
        if (peek() == 'n') {
            literal("null");
            return;
        }
        expect('[');
        enter();
        skipBlanks();
        if (peek() == ']') {
            at++;
            depth--;
            return;
        }
        while (true) {
            element.run();
            skipBlanks();
            if (peek() == ',') {
                at++;
            } else {
                expect(']');
                depth--;
                return;
            }
        }
    }

    @FunctionalInterface
    interface IoAction {
        void run() throws IOException;
    }

    /** A string value; null reads as the empty string (the API's omitted and empty are one to the watcher). */
    String string() throws IOException {
        skipBlanks();
        if (peek() == 'n') {
            literal("null");
            return "";
        }
        expect('"');
        StringBuilder out = new StringBuilder();
        scanString(out);
        return out.toString();
    }

    /** A number's literal text (the API's status codes). */
    String number() throws IOException {
        skipBlanks();
        StringBuilder out = new StringBuilder();
        int c = peek();
        if (c == '-') {
            out.append((char) next());
        }
        if (peek() == '0') {
            out.append((char) next());
        } else if (!digits(out)) {
            throw error("a number needs digits");
        }
        if (peek() == '.') {
            out.append((char) next());
            if (!digits(out)) {
                throw error("a fraction needs digits");
            }
        }
        if (peek() == 'e' || peek() == 'E') {
            out.append((char) next());
            if (peek() == '+' || peek() == '-') {
                out.append((char) next());
            }
            if (!digits(out)) {
                throw error("an exponent needs digits");
            }
        }
        return out.toString();
    }

    /** Reads past one value of any kind, keeping nothing of it. */
    void skip() throws IOException {
        skipBlanks();
        int c = peek();
        switch (c) {
            case '{' -> object(name -> skip());
            case '[' -> array(this::skip);
            case '"' -> {
                at++;
                scanString(null);
            }
            case 't' -> literal("true");
            case 'f' -> literal("false");
            case 'n' -> literal("null");
            case -1 -> throw error("the text ends where a value was expected");
            default -> {
                if (c == '-' || (c >= '0' && c <= '9')) {
                    number();
                } else {
                    throw error("unexpected character '" + (char) c + "'");
                }
            }
        }
    }

    /** The offset of the next character, for errors. */
    long offset() {
        return consumed + at;
    }

    private void enter() throws Malformed {
        if (++depth > MAX_DEPTH) {
            throw error("nested more than " + MAX_DEPTH + " levels deep");
        }
    }

    /** After the opening quote; appends the string's value to {@code out} unless it is null. */
    private void scanString(StringBuilder out) throws IOException {
        while (true) {
            int c = next();
            if (c < 0) {
                throw error("a string is not closed");
            }
            if (c == '"') {
                return;
            }
            if (c < 0x20) {
                at--;
                throw error("a control character inside a string");
            }
            if (c == '\\') {
                int escaped = next();
                char value = switch (escaped) {
                    case '"', '\\', '/' -> (char) escaped;
                    case 'b' -> '\b';
                    case 'f' -> '\f';
                    case 'n' -> '\n';
                    case 'r' -> '\r';
                    case 't' -> '\t';
                    case 'u' -> hexUnit();
                    case -1 -> throw error("a string ends in a backslash");
                    default -> {
                        at--;
                        throw error("unknown escape \\" + (char) escaped);
                    }
                };
                c = value;
            }
            if (out != null) {
                if (out.length() >= MAX_STRING) {
                    throw error("a string longer than " + MAX_STRING + " characters");
                }
                out.append((char) c);
            }
        }
    }

    private char hexUnit() throws IOException {
        int unit = 0;
        for (int i = 0; i < 4; i++) {
            int digit = Character.digit(peek(), 16);
            if (peek() < 0 || digit < 0) {
                throw error("\\u needs four hex digits");
            }
            at++;
            unit = unit * 16 + digit;
        }
        return (char) unit;
    }

    private boolean digits(StringBuilder out) throws IOException {
        boolean any = false;
        while (peek() >= '0' && peek() <= '9') {
            out.append((char) next());
            any = true;
        }
        return any;
    }

    private void literal(String word) throws IOException {
        for (int i = 0; i < word.length(); i++) {
            if (peek() != word.charAt(i)) {
                throw error("unexpected word");
            }
            at++;
        }
    }

    private void expect(char c) throws IOException {
        int found = peek();
        if (found != c) {
            throw error(found < 0 ? "the text ends where '" + c + "' was expected"
                    : "expected '" + c + "' but found '" + (char) found + "'");
        }
        at++;
    }

    private void skipBlanks() throws IOException {
        while (true) {
            int c = peek();
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            at++;
        }
    }

    private int next() throws IOException {
        int c = peek();
        if (c >= 0) {
            at++;
        }
        return c;
    }

    /** The next character, or -1 at the end of the text. */
    private int peek() throws IOException {
        if (at == end) {
            consumed += end;
            at = 0;
            end = 0;
            int read;
            do {
                read = in.read(buffer, 0, buffer.length);
            } while (read == 0);
            if (read < 0) {
                return -1;
            }
            end = read;
        }
        return buffer[at];
    }

    Malformed error(String problem) {
        return new Malformed(what + ": " + problem + " at character " + offset());
    }
}
