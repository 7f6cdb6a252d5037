package io.lvmqos.guarantee;

import io.lvmqos.cgroup.IoCost;
import io.lvmqos.cgroup.IoWeights;
import io.lvmqos.cgroup.PodCgroups;
import io.lvmqos.device.BackingDisks;
import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import io.lvmqos.mount.MountTable;
import io.lvmqos.volume.Guarantee;
import io.lvmqos.volume.IoCostWeight;
import io.lvmqos.volume.GuaranteePolicy;
import io.lvmqos.volume.ManagedVolume;
import io.lvmqos.volume.PodLimitsApplier;
import io.lvmqos.volume.QosParameters;
import io.lvmqos.volume.VolumeCatalog;
import io.lvmqos.volume.VolumeId;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Volumes' weights and floors as io.cost weights in the cgroups of the pods that use them (cgroup
 * v2). On every change to what is published on a disk (a publish, an unpublish, a change of class)
 * the weights of that disk are worked out again from the truth: which pods use which volumes (the
 * mount table), what each volume is promised (its LV tags, through the catalog), the cgroup tree
 * and the weights already in it; {@link ShareCalculator} says what to write.
 *
 * <p>The driver writes only per-device lines (MAJ:MIN N in io.weight), only for the disks under its
 * io.cost volume groups, and only in the cgroups of pods using its volumes and their ancestors up
 * to the root; a cgroup's default weight and its weights on other disks stay as they are, and
 * every line it stops needing it removes.
 */
public final class PodShares implements PodLimitsApplier, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(PodShares.class);
    /**
     * How often the weights of disks with floors are worked out again. A floor's weights depend on
     * every sibling cgroup on the path, and kubelet makes and removes pods (and QoS slices) without
     * telling the driver; a new neighbour is counted within this long.
     */
    public static final Duration REBALANCE_PERIOD = Duration.ofSeconds(2);

    private final VolumeCatalog catalog;
    private final PublishedPods pods;
    private final PodCgroups cgroups;
    private final MountTable mountTable;
    private final IoWeights weights;
    private final IoCost ioCost;
    private final BackingDisks disks;
    private final GuaranteePolicy policy;
    private final FloorWatch floorWatch;
    /** The cgroups this process last gave a line on each disk: where to look for lines no longer needed. */
    private final Map<DeviceNumber, Set<Path>> written = new HashMap<>();
    private final ScheduledExecutorService rebalancer = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().daemon().name("io-cost-weights").factory());
    private boolean warnedOnce;

    public PodShares(VolumeCatalog catalog, PublishedPods pods, PodCgroups cgroups, MountTable mountTable, IoWeights weights,
                     IoCost ioCost, BackingDisks disks, GuaranteePolicy policy, FloorWatch floorWatch) {
        this.catalog = catalog;
        this.pods = pods;
        this.cgroups = cgroups;
        this.mountTable = mountTable;
        this.weights = weights;
        this.ioCost = ioCost;
        this.disks = disks;
        this.policy = policy;
        this.floorWatch = floorWatch;
    }

    /** Starts working out the weights of disks with floors again every {@link #REBALANCE_PERIOD}; a no-op without io.cost. */
    public void start() {
        if (policy.ioCostGroups().isEmpty()) {
            return;
        }
        rebalancer.scheduleWithFixedDelay(this::rebalanceFloored, REBALANCE_PERIOD.toMillis(),
                REBALANCE_PERIOD.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        rebalancer.shutdownNow();
    }

    /** The periodic pass: every disk under a volume with a floor, as the truth is now. */
    private void rebalanceFloored() {
        try {
            Set<DeviceNumber> floored = new LinkedHashSet<>();
            for (ManagedVolume volume : catalog.indexed()) {
                if (volume.qos().guarantee().hasFloor()) {
                    disksOf(volume).ifPresent(floored::addAll);
                }
            }
            List<FloorWatch.FlooredPod> pods = floored.isEmpty() ? List.of() : rebalance(floored, Set.of(), null);
            floorWatch.observe(floored, pods);
            warnedOnce = false;
        } catch (RuntimeException e) {
            if (!warnedOnce) {
                log.warn("could not work out the io.cost weights of the disks with floors again: {}", e.getMessage());
                warnedOnce = true;
            } else {
                log.debug("could not work out the io.cost weights of the disks with floors again: {}", e.getMessage());
            }
        }
    }

    /**
     * After the volume was published into a pod: its disks' weights worked out again, with the
     * new pod among them. Refused when io.cost is not on for one of its disks.
     */
    public void published(ManagedVolume volume, String podUid) {
        Guarantee guarantee = volume.qos().guarantee();
        if (guarantee.isNone()) {
            return;
        }
        policy.requireSupported(volume.id().volumeGroup(), guarantee);
        Set<DeviceNumber> under = disksOf(volume).orElseThrow(() -> DriverException.failedPrecondition(
                "the device of volume " + volume.id() + " is gone"));
        for (DeviceNumber disk : under) {
            if (!ioCost.enabledOn(disk)) {
                throw DriverException.failedPrecondition("volume " + volume.id() + " has "
                        + QosParameters.describe(guarantee) + ", but io.cost is not on for its disk " + disk + " ("
                        + weights.root().resolve("io.cost.qos") + " has no enable=1 line for it): start the plugin with"
                        + " --io-cost=" + volume.id().volumeGroup());
            }
        }
        Set<Path> released = cgroups.find(podUid).cgroup().map(Set::of).orElse(Set.of());
        rebalance(under, released);
    }

    /** After an unpublish from the pod: the device's disks worked out again without it. */
    public void released(DeviceNumber device, String podUid) {
        if (policy.ioCostGroups().isEmpty()) {
            return;
        }
        Set<DeviceNumber> under;
        try {
            under = disks.of(device);
        } catch (DriverException.NotFound gone) {
            log.debug("device {} is gone: no weights to work out again for it", device);
            return;
        }
        rebalance(under, cgroups.find(podUid).cgroup().map(Set::of).orElse(Set.of()));
    }

    /** After a change of the volume's class: its disks worked out again, its pods' lines included. */
    @Override
    public void applyToPodsUsing(ManagedVolume volume) {
        if (policy.ioCostGroups().isEmpty()) {
            return;
        }
        if (!volume.qos().guarantee().isNone()) {
            policy.requireSupported(volume.id().volumeGroup(), volume.qos().guarantee());
        }
        Optional<Set<DeviceNumber>> under = disksOf(volume);
        if (under.isEmpty()) {
            return;
        }
        Set<Path> using = new LinkedHashSet<>();
        for (String pod : pods.podsUsing(DeviceNumber.of(volume.devicePath()),
                Optional.of(pods.deviceNodeRoot(volume.devicePath())))) {
            cgroups.find(pod).cgroup().ifPresent(using::add);
        }
        rebalance(under.get(), using, volume);
    }

    private void rebalance(Set<DeviceNumber> under, Set<Path> alsoOurs) {
        rebalance(under, alsoOurs, null);
    }

    /**
     * Works the weights out again on each disk and writes them.
     *
     * @param alsoOurs cgroups that may hold a line of ours although no pod claim names them now (a pod
     *     that has just let a volume go): their lines, and their ancestors', go if no longer needed
     * @param modified a volume as a change of class is about to make it, in place of the index's copy
     *     (the change reaches the pods before LVM records it); null for the index as it is
     */
    private synchronized List<FloorWatch.FlooredPod> rebalance(Set<DeviceNumber> under, Set<Path> alsoOurs,
                                                               ManagedVolume modified) {
        List<FloorWatch.FlooredPod> floored = new ArrayList<>();
        MountTable.Snapshot table = mountTable.snapshot();
        List<ManagedVolume> volumes = new ArrayList<>(catalog.indexed());
        if (modified != null) {
            volumes.removeIf(v -> v.id().equals(modified.id()));
            volumes.add(modified);
        }
        for (DeviceNumber disk : under) {
            List<Use> uses = usesOn(disk, table, volumes);
            floored.addAll(flooredPods(disk, uses));
            Map<Path, ShareCalculator.Claim> claims = claimsOn(uses);
            ShareCalculator.Result result = ShareCalculator.weights(weights.root(), disk, claims.values(), tree());
            Set<Path> ours = new LinkedHashSet<>(written.getOrDefault(disk, Set.of()));
            for (Path cgroup : claims.keySet()) {
                ours.addAll(upFrom(cgroup));
            }
            for (Path cgroup : alsoOurs) {
                ours.addAll(upFrom(cgroup));
            }
            boolean changed = false;
            // ancestors first: a pod's line is written once its parents already carry theirs
            List<Map.Entry<Path, IoCostWeight>> wanted = result.weights().entrySet().stream()
                    .sorted(Map.Entry.comparingByKey((a, b) -> Integer.compare(a.getNameCount(), b.getNameCount())))
                    .toList();
            for (Map.Entry<Path, IoCostWeight> line : wanted) {
                if (!line.getValue().equals(weights.read(line.getKey()).perDevice().get(disk))) {
                    weights.set(line.getKey(), disk, line.getValue());
                    changed = true;
                }
            }
            for (Path cgroup : ours) {
                if (!result.weights().containsKey(cgroup) && Files.isDirectory(cgroup)
                        && weights.read(cgroup).perDevice().containsKey(disk)) {
                    weights.remove(cgroup, disk);
                    changed = true;
                }
            }
            written.put(disk, Set.copyOf(result.weights().keySet()));
            if (changed) {
                if (!result.clamped().isEmpty()) {
                    log.warn("io.cost weights on disk {} reached the kernel's largest, 10000, in {}: the floors there"
                            + " may not fully hold against this many neighbours", disk, result.clamped());
                }
                log.info("io.cost weights on disk {}: {}", disk, result.weights());
            }
        }
        return floored;
    }

    /** The pods among {@code uses} with floors on the disk, each with its floored volumes' floors summed. */
    private static List<FloorWatch.FlooredPod> flooredPods(DeviceNumber disk, List<Use> uses) {
        Map<Path, List<Use>> byCgroup = new LinkedHashMap<>();
        for (Use use : uses) {
            if (use.volume().qos().guarantee().hasFloor()) {
                byCgroup.computeIfAbsent(use.cgroup(), c -> new ArrayList<>()).add(use);
            }
        }
        List<FloorWatch.FlooredPod> floored = new ArrayList<>();
        byCgroup.forEach((cgroup, podUses) -> {
            FloorWatch.Floors floors = FloorWatch.Floors.NONE;
            List<VolumeId> ids = new ArrayList<>();
            for (Use use : podUses) {
                floors = floors.plus(FloorWatch.Floors.of(use.volume().qos().guarantee()));
                ids.add(use.volume().id());
            }
            floored.add(new FloorWatch.FlooredPod(podUses.getFirst().podUid(), cgroup, disk, List.copyOf(ids), floors));
        });
        return floored;
    }

    /** A pod using a volume with a guarantee on a disk. */
    private record Use(String podUid, Path cgroup, ManagedVolume volume) {
    }

    /** Every pod (with its cgroup found) using a volume with a guarantee on the disk, once per volume. */
    private List<Use> usesOn(DeviceNumber disk, MountTable.Snapshot table, List<ManagedVolume> volumes) {
        List<Use> uses = new ArrayList<>();
        for (ManagedVolume volume : volumes) {
            if (volume.qos().guarantee().isNone() || !disksOf(volume).map(d -> d.contains(disk)).orElse(false)) {
                continue;
            }
            DeviceNumber device = DeviceNumber.of(volume.devicePath());
            for (String pod : pods.podsUsing(table, device, Optional.of(pods.deviceNodeRoot(volume.devicePath())))) {
                cgroups.find(pod).cgroup().ifPresent(cgroup -> uses.add(new Use(pod, cgroup, volume)));
            }
        }
        return uses;
    }

    /** One claim per pod using a volume with a guarantee on the disk: its largest weight, its floors' share summed. */
    private Map<Path, ShareCalculator.Claim> claimsOn(List<Use> uses) {
        Map<Path, Optional<IoCostWeight>> weightOf = new LinkedHashMap<>();
        Map<Path, Double> shareOf = new LinkedHashMap<>();
        for (Use use : uses) {
            Guarantee guarantee = use.volume().qos().guarantee();
            double share = policy.declared(use.volume().id().volumeGroup()).share(guarantee);
            weightOf.merge(use.cgroup(), guarantee.weight(), PodShares::larger);
            shareOf.merge(use.cgroup(), share, Double::sum);
        }
        Map<Path, ShareCalculator.Claim> claims = new LinkedHashMap<>();
        weightOf.forEach((cgroup, weight) -> claims.put(cgroup, new ShareCalculator.Claim(cgroup,
                weight.orElseGet(() -> weights.read(cgroup).defaultWeight()), shareOf.get(cgroup))));
        return claims;
    }

    /** The larger of two volumes' weights for one pod; a volume without one leaves the other's. */
    private static Optional<IoCostWeight> larger(Optional<IoCostWeight> a, Optional<IoCostWeight> b) {
        if (a.isEmpty() || b.isEmpty()) {
            return a.or(() -> b);
        }
        return a.get().value() >= b.get().value() ? a : b;
    }

    private Optional<Set<DeviceNumber>> disksOf(ManagedVolume volume) {
        try {
            return Optional.of(disks.of(DeviceNumber.of(volume.devicePath())));
        } catch (DriverException.NotFound gone) {
            return Optional.empty();
        }
    }

    /** The cgroup and its ancestors below the root. */
    private List<Path> upFrom(Path cgroup) {
        List<Path> path = new ArrayList<>();
        for (Path at = cgroup; at != null && at.startsWith(weights.root()) && !at.equals(weights.root()); at = at.getParent()) {
            path.add(at);
        }
        return path;
    }

    private ShareCalculator.Tree tree() {
        return new ShareCalculator.Tree() {
            @Override
            public List<Path> children(Path cgroup) {
                try (Stream<Path> entries = Files.list(cgroup)) {
                    return entries.filter(Files::isDirectory).sorted().toList();
                } catch (IOException | UncheckedIOException e) {
                    return List.of(); // a cgroup removed while we looked has no children to weigh
                }
            }

            @Override
            public IoCostWeight defaultWeight(Path cgroup) {
                return weights.read(cgroup).defaultWeight();
            }

            @Override
            public IoCostWeight weightOn(Path cgroup, DeviceNumber disk) {
                return weights.read(cgroup).on(disk);
            }
        };
    }
}
