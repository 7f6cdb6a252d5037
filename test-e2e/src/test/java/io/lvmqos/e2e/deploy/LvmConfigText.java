package io.lvmqos.e2e.deploy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads LVM configuration text (lvm.conf syntax, as in a file or a --config argument) into
 * "section/key" to value, enough to compare the settings two places give. Arrays are kept as
 * their text.
 */
final class LvmConfigText {

    private LvmConfigText() {
    }

    static Map<String, String> settings(String text) {
        List<String> tokens = tokens(text);
        Map<String, String> settings = new TreeMap<>();
        List<String> sections = new ArrayList<>();
        for (int i = 0; i < tokens.size(); i++) {
            String token = tokens.get(i);
            if (token.equals("}")) {
                sections.removeLast();
            } else if (i + 1 < tokens.size() && tokens.get(i + 1).equals("{")) {
                sections.add(token);
                i++;
            } else if (i + 2 < tokens.size() && tokens.get(i + 1).equals("=")) {
                settings.put(String.join("/", sections) + "/" + token, unquote(tokens.get(i + 2)));
                i += 2;
            } else {
                throw new AssertionError("cannot read LVM configuration near '" + token + "' in: " + text);
            }
        }
        if (!sections.isEmpty()) {
            throw new AssertionError("unclosed section " + sections + " in: " + text);
        }
        return settings;
    }

    private static List<String> tokens(String text) {
        List<String> tokens = new ArrayList<>();
        int i = 0;
        while (i < text.length()) {
            char c = text.charAt(i);
            if (Character.isWhitespace(c)) {
                i++;
            } else if (c == '#') {
                while (i < text.length() && text.charAt(i) != '\n') {
                    i++;
                }
            } else if (c == '{' || c == '}' || c == '=') {
                tokens.add(String.valueOf(c));
                i++;
            } else if (c == '"') {
                int end = text.indexOf('"', i + 1);
                tokens.add(text.substring(i, end + 1));
                i = end + 1;
            } else if (c == '[') {
                int end = text.indexOf(']', i);
                tokens.add(text.substring(i, end + 1));
                i = end + 1;
            } else {
                int start = i;
                while (i < text.length() && !Character.isWhitespace(text.charAt(i)) && "{}=\"#".indexOf(text.charAt(i)) < 0) {
                    i++;
                }
                tokens.add(text.substring(start, i));
            }
        }
        return tokens;
    }

    private static String unquote(String value) {
        return value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")
                ? value.substring(1, value.length() - 1) : value;
    }
}
