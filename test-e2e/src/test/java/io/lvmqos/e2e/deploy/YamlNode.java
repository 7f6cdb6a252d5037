package io.lvmqos.e2e.deploy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A position in a parsed YAML document, with its path for messages ("daemonset.yaml:
 * spec.template.spec.containers[0].args"). Missing keys give an absent node rather than a null, so
 * that a test reads like the manifest and fails with the path that was wrong.
 */
record YamlNode(Object value, String where) {

    static YamlNode root(Object document, String source) {
        return new YamlNode(document, source + ":");
    }

    YamlNode get(String key) {
        Object child = value instanceof Map<?, ?> map ? map.get(key) : null;
        return new YamlNode(child, where + (where.endsWith(":") ? "" : ".") + key);
    }

    /** Follows a dotted path of keys. */
    YamlNode path(String dotted) {
        YamlNode node = this;
        for (String key : dotted.split("\\.")) {
            node = node.get(key);
        }
        return node;
    }

    boolean present() {
        return value != null;
    }

    /** The items of a list; an absent list is empty, as Kubernetes treats it. */
    List<YamlNode> items() {
        if (value == null) {
            return List.of();
        }
        if (!(value instanceof List<?> list)) {
            throw new AssertionError(where + " is not a list: " + value);
        }
        List<YamlNode> items = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            items.add(new YamlNode(list.get(i), where + "[" + i + "]"));
        }
        return items;
    }

    String text() {
        if (!(value instanceof String text)) {
            throw new AssertionError(where + " is not a string: " + value);
        }
        return text;
    }

    Optional<String> optionalText() {
        return present() ? Optional.of(text()) : Optional.empty();
    }

    boolean bool() {
        if (!(value instanceof Boolean flag)) {
            throw new AssertionError(where + " is not a boolean: " + value);
        }
        return flag;
    }

    List<String> texts() {
        return items().stream().map(YamlNode::text).toList();
    }

    Map<?, ?> map() {
        if (!(value instanceof Map<?, ?> map)) {
            throw new AssertionError(where + " is not a map: " + value);
        }
        return map;
    }

    String kind() {
        return get("kind").optionalText().orElse("");
    }

    String name() {
        return path("metadata.name").optionalText().orElse("");
    }

    @Override
    public String toString() {
        return where + " " + value;
    }
}
