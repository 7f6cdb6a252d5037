package io.lvmqos.e2e.demo;

import java.nio.file.Path;
import java.util.List;

/** Reading lines of /proc/self/mountinfo: {@code id parent maj:min root mount-point options ...}. */
final class Mountinfo {

    private Mountinfo() {
    }

    /** The mount point of a line, with the kernel's octal escapes ({@code \040} for a blank) undone. */
    static String mountPoint(String line) {
        String[] fields = line.split(" ");
        return fields.length > 4 ? unescape(fields[4]) : "";
    }

    /** The mount points of a mountinfo text that lie strictly below {@code dir}. */
    static List<String> mountsBelow(String mountinfo, Path dir) {
        return mountinfo.lines().map(Mountinfo::mountPoint)
                .filter(point -> !point.isEmpty() && Path.of(point).startsWith(dir) && !Path.of(point).equals(dir))
                .toList();
    }

    private static String unescape(String field) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < field.length(); i++) {
            char c = field.charAt(i);
            if (c == '\\' && i + 3 < field.length() && field.substring(i + 1, i + 4).matches("[0-7]{3}")) {
                out.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }
}
