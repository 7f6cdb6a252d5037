package io.lvmqos.guarantee;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A disk's io.cost model as {@code lvmqos calibrate} measured it, kept in a tag of the volume
 * group it was measured through, so that it goes where the disk goes and the node plugin reads it
 * at start with the group (there is no other state). The disk's size is kept beside it: a group
 * moved to another disk (pvmove, a replaced disk) no longer matches, and its model is not trusted.
 *
 * <p>The tag is one word of LVM's tag alphabet: {@code lvmqos.iocost=rbps:N/rseqiops:N/.../disk:BYTES/at:SECONDS}.
 *
 * @param model what the disk did
 * @param diskBytes the size of the whole disk measured
 * @param at when the measurement ended
 */
public record Calibration(CostModel model, long diskBytes, Instant at) {

    /** The tag's key: a volume group has at most one such tag. */
    public static final String TAG_KEY = "lvmqos.iocost";

    public Calibration {
        if (diskBytes <= 0) {
            throw new IllegalArgumentException("a disk's size must be positive: " + diskBytes);
        }
    }

    /** The volume group tag that records this calibration. */
    public String tag() {
        Map<String, Long> fields = fields();
        StringBuilder text = new StringBuilder(TAG_KEY).append('=');
        fields.forEach((key, value) -> text.append(key).append(':').append(value).append('/'));
        text.setLength(text.length() - 1);
        return text.toString();
    }

    private Map<String, Long> fields() {
        Map<String, Long> fields = new LinkedHashMap<>();
        fields.put("rbps", model.rbps());
        fields.put("rseqiops", model.rseqiops());
        fields.put("rrandiops", model.rrandiops());
        fields.put("wbps", model.wbps());
        fields.put("wseqiops", model.wseqiops());
        fields.put("wrandiops", model.wrandiops());
        fields.put("disk", diskBytes);
        fields.put("at", at.getEpochSecond());
        return fields;
    }

    /** Whether a volume group tag is a calibration's, well formed or not. */
    public static boolean isCalibrationTag(String tag) {
        return tag.startsWith(TAG_KEY + "=");
    }

    /** The calibration among a volume group's tags; empty when there is none or it is not well formed. */
    public static Optional<Calibration> fromTags(List<String> tags) {
        return tags.stream().filter(Calibration::isCalibrationTag).findFirst().flatMap(Calibration::parse);
    }

    static Optional<Calibration> parse(String tag) {
        Map<String, String> fields = new LinkedHashMap<>();
        for (String field : tag.substring(TAG_KEY.length() + 1).split("/")) {
            int colon = field.indexOf(':');
            if (colon <= 0) {
                return Optional.empty();
            }
            fields.put(field.substring(0, colon), field.substring(colon + 1));
        }
        Optional<CostModel> model = CostModel.fromSettings(fields);
        String disk = fields.getOrDefault("disk", "");
        String at = fields.getOrDefault("at", "");
        if (model.isEmpty() || !disk.matches("[0-9]{1,19}") || !at.matches("[0-9]{1,12}")) {
            return Optional.empty();
        }
        try {
            return Optional.of(new Calibration(model.get(), Long.parseLong(disk), Instant.ofEpochSecond(Long.parseLong(at))));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }
}
