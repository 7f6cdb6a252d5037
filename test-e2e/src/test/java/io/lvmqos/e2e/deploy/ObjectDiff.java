package io.lvmqos.e2e.deploy;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

/**
 * Field-by-field differences between two renderings of Kubernetes objects, matched by kind,
 * namespace and name: each difference named by its path, so that a failing comparison says which
 * field of which object differs, not that two texts do.
 */
final class ObjectDiff {

    private ObjectDiff() {
    }

    static String key(YamlNode object) {
        return object.kind() + " " + object.path("metadata.namespace").optionalText().map(ns -> ns + "/").orElse("")
                + object.name();
    }

    static Map<String, YamlNode> byKey(List<YamlNode> objects) {
        Map<String, YamlNode> keyed = new LinkedHashMap<>();
        for (YamlNode object : objects) {
            if (keyed.put(key(object), object) != null) {
                throw new AssertionError("two objects are " + key(object));
            }
        }
        return keyed;
    }

    /** Every difference between the two sets of objects; empty when they are the same. */
    static List<String> between(List<YamlNode> expected, List<YamlNode> actual) {
        Map<String, YamlNode> left = byKey(expected);
        Map<String, YamlNode> right = byKey(actual);
        List<String> differences = new ArrayList<>();
        for (String key : new TreeSet<>(left.keySet())) {
            if (!right.containsKey(key)) {
                differences.add(key + ": missing");
            } else {
                compare(left.get(key).value(), right.get(key).value(), key + ":", differences);
            }
        }
        for (String key : new TreeSet<>(right.keySet())) {
            if (!left.containsKey(key)) {
                differences.add(key + ": not expected");
            }
        }
        return differences;
    }

    private static void compare(Object expected, Object actual, String path, List<String> differences) {
        if (expected instanceof Map<?, ?> a && actual instanceof Map<?, ?> b) {
            TreeSet<String> keys = new TreeSet<>();
            a.keySet().forEach(k -> keys.add(String.valueOf(k)));
            b.keySet().forEach(k -> keys.add(String.valueOf(k)));
            for (String k : keys) {
                String child = path + (path.endsWith(":") ? " " : ".") + k;
                if (!a.containsKey(k)) {
                    differences.add(child + ": not expected, is " + b.get(k));
                } else if (!b.containsKey(k)) {
                    differences.add(child + ": missing, expected " + a.get(k));
                } else {
                    compare(a.get(k), b.get(k), child, differences);
                }
            }
        } else if (expected instanceof List<?> a && actual instanceof List<?> b) {
            if (a.size() != b.size()) {
                differences.add(path + ": " + b.size() + " items, expected " + a.size() + ": " + b + " vs " + a);
                return;
            }
            for (int i = 0; i < a.size(); i++) {
                compare(a.get(i), b.get(i), path + "[" + i + "]", differences);
            }
        } else if (!Objects.equals(scalar(expected), scalar(actual))) {
            differences.add(path + ": is " + actual + ", expected " + expected);
        }
    }

    /** Numbers compare by value whatever their Java type (YAML 9810 may load as Integer or Long). */
    private static Object scalar(Object value) {
        return value instanceof Number number ? number.toString() : value;
    }
}
