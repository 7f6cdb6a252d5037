package io.lvmqos.e2e.guest;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;

/**
 * What the churn believes the node holds, kept by the test alone from the calls it made and the
 * answers it got: the volumes and snapshots (sizes, thin or linear, the limits their parameters
 * asked for, lineage), which volume is staged where and published into which pod. The invariants
 * hold the node against this, never against what the driver says.
 */
final class ChurnModel {

    static final long MIB = 1L << 20;

    /** A volume: its limits as the LV tags should store them ({@code wbps -> 4194304}, {@code riops -> 100/GiB}). */
    static final class Volume {
        final String name;
        final String id;
        final boolean thin;
        final Optional<String> source;
        final Map<String, String> context;
        long sizeBytes;
        final Map<String, String> limits = new TreeMap<>();
        Optional<Path> staging = Optional.empty();
        /** The pod it is published into (its index), and where. */
        Optional<Integer> pod = Optional.empty();
        Optional<Path> target = Optional.empty();

        Volume(String name, String id, boolean thin, long sizeBytes, Optional<String> source, Map<String, String> context) {
            this.name = name;
            this.id = id;
            this.thin = thin;
            this.sizeBytes = sizeBytes;
            this.source = source;
            this.context = Map.copyOf(context);
        }

        String lvName() {
            return Csi2.lvName(id);
        }

        @Override
        public String toString() {
            return name + (thin ? " (thin, " : " (linear, ") + sizeBytes / MIB + " MiB, limits " + limits
                    + source.map(s -> ", from " + Csi2.lvName(s)).orElse("") + ")";
        }
    }

    record Snapshot(String name, String id, long sizeBytes, String sourceId) {
        String lvName() {
            return Csi2.lvName(id);
        }
    }

    final Map<String, Volume> volumes = new LinkedHashMap<>();
    final Map<String, Snapshot> snapshots = new LinkedHashMap<>();

    long thinPromised() {
        return volumes.values().stream().filter(v -> v.thin).mapToLong(v -> v.sizeBytes).sum()
                + snapshots.values().stream().mapToLong(Snapshot::sizeBytes).sum();
    }

    long linearBytes() {
        return volumes.values().stream().filter(v -> !v.thin).mapToLong(v -> v.sizeBytes).sum();
    }

    List<Volume> volumes(java.util.function.Predicate<Volume> which) {
        return volumes.values().stream().filter(which).toList();
    }

    static <T> T pick(Random random, List<T> from) {
        return from.get(random.nextInt(from.size()));
    }

    /**
     * Random QoS parameters, StorageClass or VolumeAttributesClass keys: byte rates per direction,
     * and IOPS either per direction or per GiB (the driver refuses the two mixed). With
     * {@code lifts}, a key may say "max", which takes that limit away.
     */
    static Map<String, String> randomLimits(Random random, boolean lifts) {
        Map<String, String> parameters = new TreeMap<>();
        for (String key : List.of("readBPS", "writeBPS")) {
            int choice = random.nextInt(lifts ? 5 : 4);
            if (choice == 4) {
                parameters.put(key, "max");
            } else if (choice > 0) {
                parameters.put(key, (4 << choice) + "Mi");
            }
        }
        switch (random.nextInt(lifts ? 4 : 3)) {
            case 1 -> {
                parameters.put("readIOPS", Integer.toString(100 * (1 + random.nextInt(5))));
                parameters.put("writeIOPS", Integer.toString(100 * (1 + random.nextInt(5))));
            }
            case 2 -> parameters.put("iopsPerGiB", Integer.toString(1000 * (1 + random.nextInt(4))));
            case 3 -> parameters.put(random.nextBoolean() ? "readIOPS" : "iopsPerGiB", "max");
            default -> {
            }
        }
        return parameters;
    }

    /**
     * What those parameters do to the limits stored in the LV tags, as the StorageClass
     * documentation says: a key present sets (or with "max" lifts) its direction, a key absent
     * leaves it; iopsPerGiB sets both IOPS directions per GiB.
     */
    static void apply(Map<String, String> parameters, Map<String, String> limits) {
        parameters.forEach((key, value) -> {
            List<String> fields = switch (key) {
                case "readBPS" -> List.of("rbps");
                case "writeBPS" -> List.of("wbps");
                case "readIOPS" -> List.of("riops");
                case "writeIOPS" -> List.of("wiops");
                case "iopsPerGiB" -> List.of("riops", "wiops");
                default -> throw new IllegalArgumentException(key);
            };
            for (String field : fields) {
                if (value.equals("max")) {
                    limits.remove(field);
                } else if (key.equals("iopsPerGiB")) {
                    limits.put(field, value + "/GiB");
                } else if (value.endsWith("Mi")) {
                    limits.put(field, Long.toString(Long.parseLong(value.substring(0, value.length() - 2)) * MIB));
                } else {
                    limits.put(field, value);
                }
            }
        });
    }

    /**
     * The io.max fields a device of this size gets from these stored limits ("max" where none),
     * or empty when every direction is unlimited (io.max then has no line for the device).
     * A per-GiB limit is floor(value x size / GiB), at least 1.
     */
    static Optional<Map<String, String>> ioMaxFields(Map<String, String> tagLimits, long sizeBytes) {
        if (tagLimits.isEmpty()) {
            return Optional.empty();
        }
        Map<String, String> fields = new TreeMap<>();
        for (String field : List.of("rbps", "wbps", "riops", "wiops")) {
            String value = tagLimits.get(field);
            if (value == null) {
                fields.put(field, "max");
            } else if (value.endsWith("/GiB")) {
                long perGiB = Long.parseLong(value.substring(0, value.length() - 4));
                fields.put(field, Long.toString(Math.max(1, Math.multiplyExact(perGiB, sizeBytes) / (1L << 30))));
            } else {
                fields.put(field, value);
            }
        }
        return Optional.of(fields);
    }

    List<String> describe() {
        List<String> lines = new ArrayList<>();
        volumes.values().forEach(v -> lines.add(v + v.staging.map(s -> " staged").orElse("")
                + v.pod.map(p -> " published in pod " + p).orElse("")));
        snapshots.values().forEach(s -> lines.add("snapshot " + s.name() + " of " + Csi2.lvName(s.sourceId())));
        return lines;
    }
}
