package io.lvmqos.volume;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * What the driver stores about a volume in its LV tags, the only state it has. Tags are set by
 * the same lvcreate that makes the LV, so an LV either carries all of them or does not exist.
 * Tag values are restricted to LVM's tag alphabet: the CSI name is base64url-encoded.
 */
public final class VolumeTags {

    public static final String PREFIX = "lvmqos.";
    public static final String NAME = PREFIX + "name";
    public static final String REQUESTED_BYTES = PREFIX + "requested";
    public static final String PARAMETERS = PREFIX + "params";
    public static final String SOURCE = PREFIX + "source";
    /**
     * Set on a linear LV when its deletion starts: how many bytes from its start are zeroed. An LV
     * with it is never handed out again; the next DeleteVolume goes on from there.
     */
    public static final String WIPED = PREFIX + "wiped";
    /**
     * On thin volumes: the StorageClass's over-provisioning ratio when the volume was made, which
     * ControllerExpandVolume (given no parameters) checks the pool against. Absent on volumes made
     * before it existed; they are grown under ratio 1.
     */
    public static final String OVERPROVISION_RATIO = PREFIX + "ratio";
    public static final String QOS_PREFIX = PREFIX + "qos.";

    private VolumeTags() {
    }

    public static String encodeName(String csiName) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(csiName.getBytes(StandardCharsets.UTF_8));
    }

    public static Optional<String> decodeName(String tagValue) {
        try {
            return Optional.of(new String(Base64.getUrlDecoder().decode(tagValue), StandardCharsets.UTF_8));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    /** A short digest of the parameters that define a volume, so a retry with other ones is refused. */
    public static String parametersDigest(Map<String, String> significantParameters) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            significantParameters.forEach((key, value) -> {
                sha.update(key.getBytes(StandardCharsets.UTF_8));
                sha.update((byte) 0);
                sha.update(value.getBytes(StandardCharsets.UTF_8));
                sha.update((byte) 0);
            });
            return HexFormat.of().formatHex(sha.digest()).substring(0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** QoS fields as tags ({@code lvmqos.qos.rbps=52428800}, {@code lvmqos.qos.riops=10/GiB}). */
    public static Map<String, String> qosTags(QosSpec qos) {
        Map<String, String> tags = new LinkedHashMap<>();
        qos.fields().forEach((field, value) -> tags.put(QOS_PREFIX + field, value));
        return tags;
    }

    public static QosSpec qosOf(Map<String, String> tags) {
        Map<String, String> fields = new LinkedHashMap<>();
        tags.forEach((key, value) -> {
            if (key.startsWith(QOS_PREFIX)) {
                fields.put(key.substring(QOS_PREFIX.length()), value);
            }
        });
        return QosSpec.fromFields(fields);
    }
}
