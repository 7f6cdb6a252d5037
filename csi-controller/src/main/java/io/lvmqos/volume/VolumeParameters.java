package io.lvmqos.volume;

import io.lvmqos.errors.DriverException;
import io.lvmqos.errors.Echo;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The StorageClass parameters of a volume, validated: where it lives (volume group, linear or
 * thin, which pool), how far a thin pool may be over-provisioned, and its I/O limits. This is the
 * one validator: CreateVolume, GetCapacity and the deploy examples' tests all run it.
 */
public record VolumeParameters(Optional<String> volumeGroup, LvmType lvmType, String thinPool,
                               BigDecimal overprovisionRatio, QosSpec qos) {

    public static final String VOLUME_GROUP = "volumeGroup";
    public static final String LVM_TYPE = "lvmType";
    public static final String THIN_POOL = "thinPool";
    public static final String OVERPROVISION_RATIO = "overprovisionRatio";
    /** Kubernetes' own keys (pvc/name, pv/name, fstype, ...): accepted and ignored. */
    public static final String KUBERNETES_PREFIX = "csi.storage.k8s.io/";
    public static final String DEFAULT_THIN_POOL = "thinpool";

    public static final List<String> PLACEMENT_KEYS = List.of(VOLUME_GROUP, LVM_TYPE, THIN_POOL, OVERPROVISION_RATIO);

    public enum LvmType {
        LINEAR, THIN;

        public String parameterValue() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public VolumeParameters {
        if (overprovisionRatio.compareTo(BigDecimal.ONE) < 0) {
            throw new IllegalArgumentException("overprovisionRatio below 1: " + overprovisionRatio);
        }
        LvmNames.requireValidName(thinPool);
        volumeGroup.ifPresent(LvmNames::requireValidName);
    }

    public static List<String> acceptedKeys() {
        List<String> keys = new ArrayList<>(PLACEMENT_KEYS);
        keys.addAll(QosKeys.KEYS);
        return keys;
    }

    public static VolumeParameters parse(Map<String, String> parameters) {
        for (String key : parameters.keySet()) {
            if (!key.startsWith(KUBERNETES_PREFIX) && !PLACEMENT_KEYS.contains(key) && !QosParameters.isQosKey(key)) {
                throw DriverException.invalidArgument("unknown parameter " + Echo.of(key) + ": accepted parameters are "
                        + String.join(", ", acceptedKeys()) + " and keys starting with " + KUBERNETES_PREFIX);
            }
        }
        Optional<String> volumeGroup = Optional.ofNullable(parameters.get(VOLUME_GROUP))
                .map(name -> checkedName(VOLUME_GROUP, name));
        LvmType type = switch (parameters.getOrDefault(LVM_TYPE, "linear")) {
            case "linear" -> LvmType.LINEAR;
            case "thin" -> LvmType.THIN;
            default -> throw DriverException.invalidArgument("parameter " + LVM_TYPE + "=\"" + parameters.get(LVM_TYPE)
                    + "\" is not valid: expected linear or thin");
        };
        String pool = checkedName(THIN_POOL, parameters.getOrDefault(THIN_POOL, DEFAULT_THIN_POOL));
        if (type == LvmType.LINEAR && parameters.containsKey(THIN_POOL)) {
            throw DriverException.invalidArgument("parameter " + THIN_POOL + " needs " + LVM_TYPE + "=thin");
        }
        BigDecimal ratio = BigDecimal.ONE;
        if (parameters.containsKey(OVERPROVISION_RATIO)) {
            String text = parameters.get(OVERPROVISION_RATIO);
            ratio = Quantity.parse(text).filter(value -> value.compareTo(BigDecimal.ONE) >= 0)
                    .orElseThrow(() -> DriverException.invalidArgument("parameter " + OVERPROVISION_RATIO + "=\""
                            + text + "\" is not valid: expected a number of at least 1, such as 1.5 or 4"));
            if (type == LvmType.LINEAR) {
                throw DriverException.invalidArgument("parameter " + OVERPROVISION_RATIO + " needs " + LVM_TYPE + "=thin");
            }
        }
        return new VolumeParameters(volumeGroup, type, pool, ratio, QosParameters.parse(parameters));
    }

    /** The parameters that decide what the volume is, for the idempotency check; Kubernetes' keys excluded. */
    public static Map<String, String> significant(Map<String, String> parameters) {
        Map<String, String> kept = new TreeMap<>();
        parameters.forEach((key, value) -> {
            if (!key.startsWith(KUBERNETES_PREFIX)) {
                kept.put(key, value);
            }
        });
        return kept;
    }

    private static String checkedName(String key, String name) {
        if (!LvmNames.isValidName(name)) {
            throw DriverException.invalidArgument("parameter " + Echo.of(key) + "=\"" + Echo.of(name)
                    + "\" is not a valid LVM name (letters, digits and + _ . - only, not starting with -)");
        }
        return name;
    }
}
