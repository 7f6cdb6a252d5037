package io.lvmqos.mount;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * The kernel's \ooo escapes of a field in mountinfo (and of statmount's option strings), both
 * ways: read by {@link MountTable} and {@link StatMount}, written by the table's look-up of a few
 * mount points.
 */
final class MountinfoEscapes {

    private MountinfoEscapes() {
    }

    /** The kernel's escaping of a path in mountinfo: space, tab, newline and backslash as \ooo. */
    static String escape(String path) {
        StringBuilder out = new StringBuilder(path.length());
        for (char c : path.toCharArray()) {
            switch (c) {
                case ' ' -> out.append("\\040");
                case '\t' -> out.append("\\011");
                case '\n' -> out.append("\\012");
                case '\\' -> out.append("\\134");
                default -> out.append(c);
            }
        }
        return out.toString();
    }

    /** Decodes the kernel's \ooo escapes; the result is UTF-8 bytes, as the path was. */
    static String unescape(String field) {
        if (field.indexOf('\\') < 0) {
            return field;
        }
        byte[] raw = field.getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream out = new ByteArrayOutputStream(raw.length);
        for (int i = 0; i < raw.length; i++) {
            if (raw[i] == '\\' && i + 3 < raw.length && isOctal(raw[i + 1]) && isOctal(raw[i + 2])
                    && isOctal(raw[i + 3])) {
                out.write(((raw[i + 1] - '0') << 6) | ((raw[i + 2] - '0') << 3) | (raw[i + 3] - '0'));
                i += 3;
            } else {
                out.write(raw[i]);
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    private static boolean isOctal(byte b) {
        return b >= '0' && b <= '7';
    }
}
