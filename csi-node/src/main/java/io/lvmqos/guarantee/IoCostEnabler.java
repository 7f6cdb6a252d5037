package io.lvmqos.guarantee;

import io.lvmqos.cgroup.CgroupMode;
import io.lvmqos.cgroup.IoCost;
import io.lvmqos.volume.DiskCapacity;
import io.lvmqos.volume.GuaranteePolicy;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns io.cost on for the disks of the groups the operator named, before the socket opens, and
 * answers which guarantees this node can keep. A group's disk gets io.cost only with a model the
 * driver can trust: the operator's (--io-cost-model) or one {@code lvmqos calibrate} measured and
 * recorded in the group's tag. With neither, io.cost is left off there (the kernel's own model,
 * pinned, can cap the whole disk below what it does, or promise more than it does) and the
 * group's weights and floors are refused, naming the command to run. Floors are admitted against
 * the model as the kernel holds it, scaled by the lowest vrate io.cost may use: one capacity,
 * which --io-capacity, if given, must agree with. A group that fails any of this keeps serving
 * caps; so does the node when io.cost cannot be had at all.
 */
public final class IoCostEnabler {

    private static final Logger log = LoggerFactory.getLogger(IoCostEnabler.class);

    /**
     * What the operator asked of io.cost for one volume group (the command line's {@code IoCostSettings}).
     *
     * @param model the operator's io.cost.model settings; empty for a calibrated model or none
     * @param qos the io.cost.qos settings
     * @param capacity the capacity declared for admitting floors, if any
     */
    public record Asked(String group, Optional<String> model, String qos, Optional<DiskCapacity> capacity) {
        public Asked {
            Objects.requireNonNull(group);
            Objects.requireNonNull(model);
            Objects.requireNonNull(qos);
            Objects.requireNonNull(capacity);
        }
    }

    private final IoCost ioCost;
    private final IoCostModels models;

    public IoCostEnabler(IoCost ioCost, IoCostModels models) {
        this.ioCost = ioCost;
        this.models = models;
    }

    /**
     * io.cost on for every group asked, as far as it can be had.
     *
     * @param cgroups the node's cgroup mode (v1 has no io.cost), asked only when a group is: finding it
     *        fails where no cgroup I/O controller is mounted, which a plugin asked for no guarantee
     *        may start without (the image's training run does)
     * @param cgroupRoot where io.cost.qos is looked for, named when the kernel has none
     */
    public GuaranteePolicy enable(List<Asked> asked, Supplier<CgroupMode> cgroups, Path cgroupRoot) {
        if (asked.isEmpty()) {
            return GuaranteePolicy.NONE;
        }
        List<String> groups = asked.stream().map(Asked::group).toList();
        if (cgroups.get() != CgroupMode.V2) {
            return refusedEverywhere(groups, "this node runs cgroup v1, which has no io.cost and no io.weight");
        }
        if (!ioCost.available()) {
            return refusedEverywhere(groups, "this kernel has no io.cost (" + cgroupRoot.resolve("io.cost.qos")
                    + " does not exist: CONFIG_BLK_CGROUP_IOCOST is off)");
        }
        Set<String> enabled = new LinkedHashSet<>();
        Map<String, DiskCapacity> capacities = new LinkedHashMap<>();
        Map<String, String> refusals = new LinkedHashMap<>();
        for (Asked group : asked) {
            try {
                IoCostModels.Enabled done = models.enable(group.group(), group.model(), group.qos(), group.capacity());
                enabled.add(group.group());
                capacities.put(group.group(), done.capacity());
                log.info("io.cost on volume group {}: {}", group.group(), done);
            } catch (IoCostModels.Untrusted e) {
                refusals.put(group.group(), e.getMessage());
                log.warn("weights and floors are refused on volume group {}: {}", group.group(), e.getMessage());
            } catch (RuntimeException e) {
                refusals.put(group.group(), "io.cost could not be enabled at start: " + e.getMessage());
                log.error("io.cost could not be enabled for volume group {}: {}; weights and floors are refused there,"
                        + " caps still work", group.group(), e.getMessage());
            }
        }
        return new GuaranteePolicy(enabled, capacities, refusals, Optional.empty());
    }

    private static GuaranteePolicy refusedEverywhere(List<String> groups, String why) {
        log.error("io.cost cannot be enabled for volume groups {}: {}; weights and floors are refused on this node, caps"
                + " still work", groups, why);
        return GuaranteePolicy.none("io.cost could not be enabled at start: " + why);
    }
}
