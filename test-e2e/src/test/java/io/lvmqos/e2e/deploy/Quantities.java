package io.lvmqos.e2e.deploy;

import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Memory sizes as Kubernetes (128Mi) and the JVM (-Xmx32m) write them. */
final class Quantities {

    private static final Pattern KUBERNETES = Pattern.compile("([0-9]+)(Ki|Mi|Gi|k|M|G)?");
    private static final Pattern JVM = Pattern.compile("([0-9]+)([kKmMgG])?");
    private static final Map<String, Long> UNITS = Map.of("Ki", 1L << 10, "Mi", 1L << 20, "Gi", 1L << 30,
            "k", 1000L, "M", 1000_000L, "G", 1000_000_000L);

    private Quantities() {
    }

    static long bytes(String quantity) {
        Matcher matcher = KUBERNETES.matcher(quantity);
        if (!matcher.matches()) {
            throw new AssertionError("not a memory quantity: " + quantity);
        }
        long number = Long.parseLong(matcher.group(1));
        return matcher.group(2) == null ? number : number * UNITS.get(matcher.group(2));
    }

    /** A JVM size such as 32m (the JVM's k, m and g are powers of 1024). */
    static long jvmBytes(String size) {
        Matcher matcher = JVM.matcher(size);
        if (!matcher.matches()) {
            throw new AssertionError("not a JVM size: " + size);
        }
        long number = Long.parseLong(matcher.group(1));
        if (matcher.group(2) == null) {
            return number;
        }
        return switch (matcher.group(2).toLowerCase(Locale.ROOT)) {
            case "k" -> number << 10;
            case "m" -> number << 20;
            default -> number << 30;
        };
    }
}
