package io.lvmqos.lvm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lvmqos.errors.DriverException;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;

/** Decodes {@code lvs}/{@code vgs --reportformat json --units b --nosuffix --binary} into records. */
final class LvmReport {

    static final List<String> LV_FIELDS = List.of("lv_name", "vg_name", "lv_size", "lv_attr", "lv_tags", "pool_lv",
            "origin", "lv_time", "lv_dm_path", "data_percent", "metadata_percent", "zero", "lv_skip_activation",
            "lv_device_open", "seg_type");
    static final List<String> THIN_FIELDS = List.of("lv_name", "vg_name", "lv_size", "thin_id", "pool_lv",
            "chunk_size", "seg_type");
    static final List<String> VG_FIELDS = List.of("vg_name", "vg_size", "vg_free", "vg_extent_size");
    /** lvs can report its VG's fields on every row: one command then gives both. */
    static final List<String> LV_AND_VG_FIELDS = java.util.stream.Stream.concat(LV_FIELDS.stream(),
            VG_FIELDS.stream().filter(f -> !LV_FIELDS.contains(f))).toList();

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final DateTimeFormatter LV_TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss Z");

    private LvmReport() {
    }

    static List<LogicalVolume> logicalVolumes(String json) {
        List<LogicalVolume> volumes = new ArrayList<>();
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (JsonNode row : rows(json, "lv")) {
            String name = row.path("lv_name").asText();
            if (name.startsWith("[")) {
                continue; // hidden internals of pools and mirrors
            }
            // seg_type and zero are segment fields: an LV extended into a second segment has two rows
            if (!seen.add(row.path("vg_name").asText() + "/" + name)) {
                continue;
            }
            String attr = row.path("lv_attr").asText();
            volumes.add(new LogicalVolume(
                    row.path("vg_name").asText(), name, Long.parseLong(row.path("lv_size").asText()),
                    LogicalVolume.SegmentType.of(row.path("segtype").asText()),
                    attr.length() > 4 && attr.charAt(4) == 'a',
                    "1".equals(row.path("lv_device_open").asText()),
                    "1".equals(row.path("lv_skip_activation").asText()),
                    flag(row.path("zero").asText()),
                    tags(row.path("lv_tags").asText()),
                    text(row.path("pool_lv").asText()), text(row.path("origin").asText()),
                    OffsetDateTime.parse(row.path("lv_time").asText(), LV_TIME).toInstant(),
                    Path.of(row.path("lv_dm_path").asText()),
                    percent(row.path("data_percent").asText()), percent(row.path("metadata_percent").asText())));
        }
        return volumes;
    }

    /** Thin LVs of a report made with {@link #THIN_FIELDS}, each with its pool's chunk size. */
    static List<ThinDevice> thinDevices(String json) {
        List<JsonNode> rows = rows(json, "lv");
        Map<String, Long> chunkOfPool = new java.util.HashMap<>();
        for (JsonNode row : rows) {
            if ("thin-pool".equals(row.path("segtype").asText())) {
                chunkOfPool.put(row.path("lv_name").asText(), Long.parseLong(row.path("chunk_size").asText()));
            }
        }
        List<ThinDevice> devices = new ArrayList<>();
        for (JsonNode row : rows) {
            String pool = row.path("pool_lv").asText();
            if ("thin".equals(row.path("segtype").asText()) && chunkOfPool.containsKey(pool)
                    && !row.path("thin_id").asText().isEmpty()) {
                devices.add(new ThinDevice(row.path("vg_name").asText(), row.path("lv_name").asText(),
                        Long.parseLong(row.path("thin_id").asText()), Long.parseLong(row.path("lv_size").asText()),
                        pool, chunkOfPool.get(pool)));
            }
        }
        return devices;
    }

    /** The VG fields of an lvs report made with {@link #LV_AND_VG_FIELDS}; empty when it has no rows. */
    static Optional<VolumeGroup> groupOfLvReport(String json) {
        return rows(json, "lv").stream().findFirst().map(LvmReport::volumeGroup);
    }

    private static VolumeGroup volumeGroup(JsonNode row) {
        return new VolumeGroup(row.path("vg_name").asText(), Long.parseLong(row.path("vg_size").asText()),
                Long.parseLong(row.path("vg_free").asText()), Long.parseLong(row.path("vg_extent_size").asText()));
    }

    static List<VolumeGroup> volumeGroups(String json) {
        List<VolumeGroup> groups = new ArrayList<>();
        for (JsonNode row : rows(json, "vg")) {
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

    private static List<JsonNode> rows(String json, String kind) {
        JsonNode root;
        try {
            root = JSON.readTree(json);
        } catch (IOException e) {
            throw DriverException.internal("cannot read the lvm report: " + e.getMessage());
        }
        List<JsonNode> rows = new ArrayList<>();
        for (JsonNode report : root.path("report")) {
            report.path(kind).forEach(rows::add);
        }
        return rows;
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
