package io.lvmqos.server;

import io.lvmqos.guarantee.IoCostEnabler;
import io.lvmqos.server.CommandLineParser.UsageException;
import io.lvmqos.volume.DiskCapacity;
import io.lvmqos.volume.Quantity;
import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What the operator asks of io.cost, per volume group: which groups' disks it governs, with which
 * cost model and QoS, and the capacity declared for admitting floors. Read from --io-cost,
 * --io-cost-model, --io-cost-qos and --io-capacity, each {@code VG:SETTINGS}; the settings' keys
 * and the form of their values are checked here, their sense by the kernel at start.
 *
 * @param groups the volume groups whose disks get io.cost, in the order given
 * @param models a group's io.cost.model settings; a group left out keeps the kernel's model
 * @param qos a group's io.cost.qos settings; a group left out gets {@link #DEFAULT_QOS}
 * @param capacities what each group's disk can do, for floors; groups left out admit none
 */
public record IoCostSettings(List<String> groups, Map<String, String> models, Map<String, String> qos,
                             Map<String, DiskCapacity> capacities) {

    /**
     * The vrate pinned at 95%: io.cost then issues a steady 95% of what the model says the disk
     * does, and shares hold to the weights. Left free to move (min=50 max=150) it follows latency,
     * and weights 8:1 gave about 3:1. Pinned at 100% with a model measured at the disk's edge (a
     * calibration's), io.cost issues all the disk does, its queue fills, every cgroup waits in it
     * alike and the shares blur: 8:1 gave 3.6:1 and a floor of 200 IOPS got 175 on the qemu node,
     * where 95% of the same model gave what the weights ask. Floors are admitted against the same
     * 95% (the lowest vrate), so admission and io.cost agree.
     */
    public static final String DEFAULT_QOS = "ctrl=user rpct=95 rlat=25000 wpct=95 wlat=25000 min=95 max=95";

    public static final IoCostSettings NONE = new IoCostSettings(List.of(), Map.of(), Map.of(), Map.of());

    private static final Set<String> MODEL_KEYS = Set.of("ctrl", "model", "rbps", "rseqiops", "rrandiops", "wbps",
            "wseqiops", "wrandiops");
    private static final Set<String> QOS_KEYS = Set.of("ctrl", "rpct", "rlat", "wpct", "wlat", "min", "max");
    private static final Pattern NUMBER = Pattern.compile("[0-9]{1,15}(\\.[0-9]{1,6})?");

    public IoCostSettings {
        groups = List.copyOf(groups);
        models = Map.copyOf(models);
        qos = Map.copyOf(qos);
        capacities = Map.copyOf(capacities);
    }

    public String qosFor(String group) {
        return qos.getOrDefault(group, DEFAULT_QOS);
    }

    public Optional<String> modelFor(String group) {
        return Optional.ofNullable(models.get(group));
    }

    /** Per group, in the order given, what {@link IoCostEnabler} is to turn on. */
    public List<IoCostEnabler.Asked> asked() {
        return groups.stream().map(group -> new IoCostEnabler.Asked(group, modelFor(group), qosFor(group),
                Optional.ofNullable(capacities.get(group)))).toList();
    }

    static IoCostSettings parse(List<String> volumeGroups, List<String> ioCost, List<String> model, List<String> qos,
                                List<String> capacity) throws UsageException {
        for (String group : ioCost) {
            requireManaged("--io-cost", group, volumeGroups);
        }
        Map<String, String> models = new LinkedHashMap<>();
        for (String value : model) {
            String[] split = split("--io-cost-model", value, ioCost);
            models.put(split[0], settings("--io-cost-model", value, split[1], MODEL_KEYS));
        }
        Map<String, String> qosByGroup = new LinkedHashMap<>();
        for (String value : qos) {
            String[] split = split("--io-cost-qos", value, ioCost);
            String settings = settings("--io-cost-qos", value, split[1], QOS_KEYS);
            if (settings.contains("enable=")) {
                throw new UsageException("--io-cost-qos " + value + ": leave enable= out, --io-cost turns it on");
            }
            qosByGroup.put(split[0], settings);
        }
        Map<String, DiskCapacity> capacities = new LinkedHashMap<>();
        for (String value : capacity) {
            String[] split = split("--io-capacity", value, volumeGroups);
            capacities.put(split[0], capacity(value, split[1]));
        }
        return new IoCostSettings(ioCost, models, qosByGroup, capacities);
    }

    private static void requireManaged(String option, String group, List<String> groups) throws UsageException {
        if (!groups.contains(group)) {
            throw new UsageException(option + " " + group + ": not a volume group this plugin manages (--volume-group: "
                    + groups + ")");
        }
    }

    /** VG:SETTINGS, the group among {@code allowed}. */
    private static String[] split(String option, String value, List<String> allowed) throws UsageException {
        int colon = value.indexOf(':');
        if (colon <= 0) {
            throw new UsageException(option + " " + value + " is not valid: expected VG:SETTINGS");
        }
        String group = value.substring(0, colon);
        if (!allowed.contains(group)) {
            throw new UsageException(option + " " + value + ": volume group " + group + " is not among " + allowed
                    + (option.startsWith("--io-cost-") ? " (give --io-cost=" + group + " too)" : ""));
        }
        return new String[] {group, value.substring(colon + 1)};
    }

    /** key=value pairs separated by blanks, each key known, each value a number (ctrl and model aside). */
    private static String settings(String option, String whole, String text, Set<String> keys) throws UsageException {
        String[] pairs = text.strip().split("\\s+");
        if (text.isBlank()) {
            throw new UsageException(option + " " + whole + ": no settings after the volume group");
        }
        for (String pair : pairs) {
            int eq = pair.indexOf('=');
            String key = eq < 0 ? pair : pair.substring(0, eq);
            String value = eq < 0 ? "" : pair.substring(eq + 1);
            boolean ok = switch (key) {
                case "ctrl" -> value.equals("auto") || value.equals("user");
                case "model" -> value.equals("linear");
                case "enable" -> true;
                default -> keys.contains(key) && NUMBER.matcher(value).matches();
            };
            if (!ok || !keys.contains(key) && !key.equals("enable")) {
                throw new UsageException(option + " " + whole + ": '" + pair + "' is not valid; the keys are "
                        + keys.stream().sorted().toList() + ", each key=number (ctrl=auto|user, model=linear)");
            }
        }
        return String.join(" ", pairs);
    }

    private static DiskCapacity capacity(String whole, String text) throws UsageException {
        OptionalLong iops = OptionalLong.empty();
        OptionalLong bps = OptionalLong.empty();
        for (String pair : text.split(",")) {
            int eq = pair.indexOf('=');
            String key = eq < 0 ? pair : pair.substring(0, eq);
            Optional<BigDecimal> value = eq < 0 ? Optional.empty() : Quantity.parse(pair.substring(eq + 1))
                    .filter(v -> v.signum() > 0 && v.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) <= 0)
                    .filter(v -> v.stripTrailingZeros().scale() <= 0);
            if (value.isEmpty() || !(key.equals("iops") || key.equals("bps"))) {
                throw new UsageException("--io-capacity " + whole + " is not valid: expected VG:iops=N, VG:bps=RATE or"
                        + " VG:iops=N,bps=RATE with whole positive numbers, such as lvmqos:iops=400,bps=200Mi");
            }
            if (key.equals("iops")) {
                iops = OptionalLong.of(value.get().longValueExact());
            } else {
                bps = OptionalLong.of(value.get().longValueExact());
            }
        }
        return DiskCapacity.symmetric(iops, bps);
    }
}
