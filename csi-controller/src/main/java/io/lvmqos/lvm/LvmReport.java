package io.lvmqos.lvm;

import io.lvmqos.errors.DriverException;
import java.nio.file.Path;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.Set;
import java.util.stream.Stream;

/** Decodes {@code lvs}/{@code vgs --reportformat json --units b --nosuffix --binary} into records. */
final class LvmReport {

    static final List<String> LV_FIELDS = List.of("lv_name", "vg_name", "lv_size", "lv_attr", "lv_tags", "pool_lv",
            "origin", "lv_time", "lv_dm_path", "data_percent", "metadata_percent", "zero", "lv_skip_activation",
            "lv_device_open", "seg_type");
    static final List<String> THIN_FIELDS = List.of("lv_name", "vg_name", "lv_size", "thin_id", "pool_lv",
            "chunk_size", "seg_type");
    static final List<String> VG_FIELDS = List.of("vg_name", "vg_size", "vg_free", "vg_extent_size");
    /** lvs can report its VG's fields on every row: one command then gives both. */
    static final List<String> LV_AND_VG_FIELDS = Stream.concat(LV_FIELDS.stream(),
            VG_FIELDS.stream().filter(f -> !LV_FIELDS.contains(f))).toList();

    private static final DateTimeFormatter LV_TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss Z");

    private LvmReport() {
    }

    static List<LogicalVolume> logicalVolumes(String json) {
        List<LogicalVolume> volumes = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (Row row : rows(json, "lv")) {
            String name = row.text("lv_name");
            if (name.startsWith("[")) {
                continue; // hidden internals of pools and mirrors
            }
            // seg_type and zero are segment fields: an LV extended into a second segment has two rows
            if (!seen.add(row.text("vg_name") + "/" + name)) {
                continue;
            }
            String attr = row.text("lv_attr");
            volumes.add(new LogicalVolume(
                    row.text("vg_name"), name, Long.parseLong(row.text("lv_size")),
                    LogicalVolume.SegmentType.of(row.text("segtype")),
                    attr.length() > 4 && attr.charAt(4) == 'a',
                    "1".equals(row.text("lv_device_open")),
                    "1".equals(row.text("lv_skip_activation")),
                    flag(row.text("zero")),
                    tags(row.text("lv_tags")),
                    text(row.text("pool_lv")), text(row.text("origin")),
                    OffsetDateTime.parse(row.text("lv_time"), LV_TIME).toInstant(),
                    Path.of(row.text("lv_dm_path")),
                    percent(row.text("data_percent")), percent(row.text("metadata_percent")),
                    "thin-pool".equals(row.text("segtype")) ? LogicalVolume.PoolHealth.ofAttr(attr)
                            : LogicalVolume.PoolHealth.OK));
        }
        return volumes;
    }

    /** What {@link #suspended} reads: every LV's name and attributes, hidden ones included. */
    static final List<String> STATE_FIELDS = List.of("lv_name", "lv_attr");

    /**
     * The LVs whose device is suspended (the fifth attribute 's'), as the LV to refresh: a pool's
     * hidden layers ({@code [pool_tpool]}, {@code [pool_tdata]}, {@code [pool_tmeta]}) as their pool,
     * which lvm refreshes as one; each name once.
     */
    static List<String> suspended(String json) {
        Set<String> names = new LinkedHashSet<>();
        for (Row row : rows(json, "lv")) {
            String attr = row.text("lv_attr");
            if (attr.length() > 4 && attr.charAt(4) == 's') {
                String name = row.text("lv_name").replaceAll("^\\[|\\]$", "");
                names.add(name.replaceFirst("_(tpool|tdata|tmeta)$", ""));
            }
        }
        return List.copyOf(names);
    }

    /** The PV devices of a {@code vgs -o pv_name} report, one row per PV. */
    static List<Path> physicalVolumes(String json) {
        return rows(json, "vg").stream().map(row -> row.text("pv_name")).filter(name -> !name.isEmpty())
                .map(Path::of).distinct().toList();
    }

    /** The group's tags, each as LVM prints it, from {@code vgs -o vg_tags}; empty when it has none. */
    static List<String> volumeGroupTags(String json) {
        return rows(json, "vg").stream().map(row -> row.text("vg_tags")).filter(tags -> !tags.isEmpty())
                .flatMap(tags -> Arrays.stream(tags.split(","))).distinct().toList();
    }

    /** Thin LVs of a report made with {@link #THIN_FIELDS}, each with its pool's chunk size. */
    static List<ThinDevice> thinDevices(String json) {
        List<Row> rows = rows(json, "lv");
        Map<String, Long> chunkOfPool = new HashMap<>();
        for (Row row : rows) {
            if ("thin-pool".equals(row.text("segtype"))) {
                chunkOfPool.put(row.text("lv_name"), Long.parseLong(row.text("chunk_size")));
            }
        }
        List<ThinDevice> devices = new ArrayList<>();
        for (Row row : rows) {
            String pool = row.text("pool_lv");
            if ("thin".equals(row.text("segtype")) && chunkOfPool.containsKey(pool)
                    && !row.text("thin_id").isEmpty()) {
                devices.add(new ThinDevice(row.text("vg_name"), row.text("lv_name"),
                        Long.parseLong(row.text("thin_id")), Long.parseLong(row.text("lv_size")),
                        pool, chunkOfPool.get(pool)));
            }
        }
        return devices;
    }

    /** What {@link #recordedPools} reads. */
    static final List<String> POOL_TRANSACTION_FIELDS = List.of("lv_name", "lv_active", "pool_lv", "thin_id",
            "transaction_id", "seg_type");

    /** Each thin pool of a report made with {@link #POOL_TRANSACTION_FIELDS}, as LVM's metadata records it. */
    static List<HalfSentPoolChange.Recorded> recordedPools(String json) {
        List<Row> rows = rows(json, "lv");
        Map<String, Map<String, Long>> idsOfPool = new HashMap<>();
        for (Row row : rows) {
            if ("thin".equals(row.text("segtype")) && !row.text("thin_id").isEmpty()) {
                idsOfPool.computeIfAbsent(row.text("pool_lv"), pool -> new HashMap<>())
                        .put(row.text("lv_name"), Long.parseLong(row.text("thin_id")));
            }
        }
        // a pool extended into a second segment has a row per segment
        Map<String, HalfSentPoolChange.Recorded> pools = new LinkedHashMap<>();
        for (Row row : rows) {
            if ("thin-pool".equals(row.text("segtype"))) {
                String name = row.text("lv_name");
                pools.putIfAbsent(name, new HalfSentPoolChange.Recorded(name, "active".equals(row.text("lv_active")),
                        Long.parseLong(row.text("transaction_id")), idsOfPool.getOrDefault(name, Map.of())));
            }
        }
        return List.copyOf(pools.values());
    }

    /** What {@link #metadataSize} reads. */
    static final List<String> POOL_METADATA_FIELDS = List.of("lv_name", "lv_metadata_size");

    /** The size in bytes of the metadata LV of the one thin pool in a report made with {@link #POOL_METADATA_FIELDS}. */
    static long metadataSize(String json) {
        List<Row> rows = rows(json, "lv");
        if (rows.isEmpty() || rows.getFirst().text("lv_metadata_size").isEmpty()) {
            throw DriverException.internal("lvs reported no thin pool metadata size: " + json);
        }
        return Long.parseLong(rows.getFirst().text("lv_metadata_size"));
    }

    /** The VG fields of an lvs report made with {@link #LV_AND_VG_FIELDS}; empty when it has no rows. */
    static Optional<VolumeGroup> groupOfLvReport(String json) {
        return rows(json, "lv").stream().findFirst().map(LvmReport::volumeGroup);
    }

    private static VolumeGroup volumeGroup(Row row) {
        return new VolumeGroup(row.text("vg_name"), Long.parseLong(row.text("vg_size")),
                Long.parseLong(row.text("vg_free")), Long.parseLong(row.text("vg_extent_size")));
    }

    static List<VolumeGroup> volumeGroups(String json) {
        List<VolumeGroup> groups = new ArrayList<>();
        for (Row row : rows(json, "vg")) {
            groups.add(volumeGroup(row));
        }
        return groups;
    }

    static Map<String, String> tags(String joined) {
        Map<String, String> tags = new LinkedHashMap<>();
        if (joined.isEmpty()) {
            return tags;
        }
        for (String tag : joined.split(",")) {
            int equals = tag.indexOf('=');
            if (equals > 0) {
                tags.put(tag.substring(0, equals), tag.substring(equals + 1));
            } else {
                tags.put(tag, "");
            }
        }
        return tags;
    }

    private static List<Row> rows(String json, String kind) {
        List<Row> rows = new ArrayList<>();
        try {
            if (!(ReportJson.parse(json) instanceof Map<?, ?> root) || !(root.get("report") instanceof List<?> reports)) {
                throw new IllegalArgumentException("no \"report\" list at its top");
            }
            for (Object report : reports) {
                if (!(report instanceof Map<?, ?> sections)) {
                    throw new IllegalArgumentException("a report that is not an object");
                }
                Object section = sections.get(kind);
                if (section == null) {
                    continue;
                }
                if (!(section instanceof List<?> entries)) {
                    throw new IllegalArgumentException("\"" + kind + "\" is not a list");
                }
                for (Object entry : entries) {
                    if (!(entry instanceof Map<?, ?> fields)) {
                        throw new IllegalArgumentException("a row of \"" + kind + "\" that is not an object");
                    }
                    rows.add(new Row(fields));
                }
            }
        } catch (IllegalArgumentException e) {
            throw DriverException.internal("cannot read the lvm report: " + e.getMessage());
        }
        return rows;
    }

    /** One row of a report: lvm writes every field as a string ({@code --reportformat json}). */
    private record Row(Map<?, ?> fields) {
        /** The field's text; empty when the row lacks it, as lvm leaves out what does not apply. */
        String text(String field) {
            Object value = fields.get(field);
            if (value == null || value == ReportJson.NULL) {
                return "";
            }
            if (value instanceof String || value instanceof Boolean) {
                return value.toString();
            }
            throw DriverException.internal("cannot read the lvm report: field " + field + " is not a value: " + value);
        }
    }

    private static Optional<String> text(String value) {
        return value.isEmpty() ? Optional.empty() : Optional.of(value);
    }

    private static Optional<Boolean> flag(String value) {
        return switch (value) {
            case "1" -> Optional.of(true);
            case "0" -> Optional.of(false);
            default -> Optional.empty();
        };
    }

    private static OptionalDouble percent(String value) {
        return value.isEmpty() ? OptionalDouble.empty() : OptionalDouble.of(Double.parseDouble(value));
    }

    static Instant parseTime(String text) {
        return OffsetDateTime.parse(text, LV_TIME).toInstant();
    }
}
