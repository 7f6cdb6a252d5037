package io.lvmqos.errors;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * How a value that came from a client appears in a log line or an error message. A PVC name with a
 * newline must not split the one-line-per-RPC log into a forged second line, a right-to-left
 * override must not disguise what follows it, and a 4 KiB id must not be echoed whole into every
 * log line and status. So control characters and other non-printable code points are escaped
 * ({@code \n}, {@code \x1b}, {@code \u202e}), and what is longer than a cap is cut there and named by
 * its length and hash, which still tells two long values apart.
 */
public final class Echo {

    /** The most an echoed value keeps, in UTF-8 bytes of its escaped form. */
    public static final int VALUE_BYTES = 256;
    /** The most a whole message keeps: a backstop for messages that echo a value without {@link #of}. */
    public static final int MESSAGE_BYTES = 2048;

    private Echo() {
    }

    /** A client's value (a name, an id, a parameter), escaped and capped; a backslash is escaped too. */
    public static String of(String value) {
        return escapeAndCap(value, VALUE_BYTES, true);
    }

    /**
     * A whole message on its way to a status or a log line. Backslashes stay as they are, so a value
     * already echoed through {@link #of} reads the same.
     */
    public static String message(String text) {
        return escapeAndCap(text, MESSAGE_BYTES, false);
    }

    private static String escapeAndCap(String value, int maxBytes, boolean escapeBackslash) {
        StringBuilder out = new StringBuilder(Math.min(value.length(), maxBytes) + 16);
        int outBytes = 0;
        int index = 0;
        while (index < value.length()) {
            int codePoint = value.codePointAt(index);
            String piece = escape(codePoint, escapeBackslash);
            int pieceBytes = utf8Length(piece);
            if (outBytes + pieceBytes > maxBytes) {
                int leftOut = value.substring(index).getBytes(StandardCharsets.UTF_8).length;
                return out.append("…(+").append(leftOut).append(" bytes, sha256 ")
                        .append(sha256Prefix(value)).append(')').toString();
            }
            out.append(piece);
            outBytes += pieceBytes;
            index += Character.charCount(codePoint);
        }
        return out.toString();
    }

    private static String escape(int codePoint, boolean escapeBackslash) {
        return switch (codePoint) {
            case '\n' -> "\\n";
            case '\r' -> "\\r";
            case '\t' -> "\\t";
            case '\\' -> escapeBackslash ? "\\\\" : "\\";
            default -> {
                if (codePoint < 0x20 || codePoint == 0x7f) {
                    yield String.format("\\x%02x", codePoint);
                }
                if (!printable(codePoint)) {
                    yield codePoint <= 0xffff ? String.format("\\u%04x", codePoint) : String.format("\\u{%x}", codePoint);
                }
                yield Character.toString(codePoint);
            }
        };
    }

    private static boolean printable(int codePoint) {
        return switch (Character.getType(codePoint)) {
            case Character.CONTROL, Character.FORMAT, Character.SURROGATE, Character.PRIVATE_USE,
                 Character.UNASSIGNED, Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR -> false;
            default -> true;
        };
    }

    private static int utf8Length(String piece) {
        int bytes = 0;
        for (int i = 0; i < piece.length(); i += Character.charCount(piece.codePointAt(i))) {
            bytes += utf8Length(piece.codePointAt(i));
        }
        return bytes;
    }

    private static int utf8Length(int codePoint) {
        if (codePoint < 0x80) {
            return 1;
        }
        if (codePoint < 0x800) {
            return 2;
        }
        return codePoint < 0x10000 ? 3 : 4;
    }

    private static String sha256Prefix(String value) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest).substring(0, 12);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }
}
