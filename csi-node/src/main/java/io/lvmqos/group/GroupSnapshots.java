package io.lvmqos.group;

import com.google.protobuf.Timestamp;
import csi.v1.Csi;
import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import io.lvmqos.errors.Echo;
import io.lvmqos.lvm.LogicalVolume;
import io.lvmqos.lvm.Lvm;
import io.lvmqos.lvm.VolumeGroupContents;
import io.lvmqos.metrics.FreezeMetrics;
import io.lvmqos.mount.KubeletPaths;
import io.lvmqos.mount.MountEntry;
import io.lvmqos.mount.MountTable;
import io.lvmqos.mount.Mounter;
import io.lvmqos.mount.PinnedMount;
import io.lvmqos.volume.KeyedLocks;
import io.lvmqos.volume.LvmNames;
import io.lvmqos.volume.ManagedVolume;
import io.lvmqos.volume.VolumeId;
import io.lvmqos.volume.VolumeTags;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Consistent snapshots of several thin volumes of this node: the filesystems of the members that
 * are mounted are frozen together, every member is snapshotted, and all are thawed. The freeze is
 * bounded: a watchdog thaws at {@link #FREEZE_LIMIT} whatever the snapshots are doing, and a group
 * whose snapshots were not all taken within it is removed and refused. Members are ordinary
 * snapshots (restore, delete and list work on them as on any) that carry the group's tag; a
 * mounted member carries a freezing tag from before its freeze until after its thaw, so that a
 * driver killed meanwhile thaws it when it starts again ({@link #thawLeftFrozen}).
 */
public final class GroupSnapshots {

    private static final Logger log = LoggerFactory.getLogger(GroupSnapshots.class);
    /** Long enough for a few lvcreates on a busy node; short enough that writers only stall. */
    static final Duration FREEZE_LIMIT = Duration.ofSeconds(20);
    public static final String GROUP_TAG = VolumeTags.PREFIX + "group";
    public static final String FREEZING_TAG = VolumeTags.PREFIX + "freezing";

    private final Lvm lvm;
    private final MountTable mountTable;
    private final KubeletPaths paths;
    private final Mounter mounter;
    private final FilesystemFreezer freezer;
    private final KeyedLocks locks;
    private final String node;
    private final List<String> volumeGroups;
    private final ScheduledExecutorService watchdogs = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().daemon().name("freeze-watchdog").factory());

    public GroupSnapshots(Lvm lvm, MountTable mountTable, KubeletPaths paths, Mounter mounter,
                          io.lvmqos.exec.CommandRunner runner, KeyedLocks locks, String node, List<String> volumeGroups) {
        this.lvm = lvm;
        this.mountTable = mountTable;
        this.paths = paths;
        this.mounter = mounter;
        this.freezer = new FilesystemFreezer(runner);
        this.locks = locks;
        this.node = node;
        this.volumeGroups = List.copyOf(volumeGroups);
    }

    public Csi.VolumeGroupSnapshot create(String name, List<String> sourceIds) {
        List<VolumeId> sources = new ArrayList<>();
        for (String text : new LinkedHashSet<>(sourceIds)) {
            VolumeId id = VolumeId.parse(VolumeId.Kind.VOLUME, text)
                    .filter(v -> v.isOn(node) && volumeGroups.contains(v.volumeGroup()))
                    .orElseThrow(() -> DriverException.notFound("source volume " + Echo.of(text)
                            + " is not a volume of node " + node));
            sources.add(id);
        }
        String vg = sources.getFirst().volumeGroup();
        if (sources.stream().anyMatch(s -> !s.volumeGroup().equals(vg))) {
            throw DriverException.invalidArgument("the members of a group snapshot must be in one volume group: "
                    + sources.stream().map(VolumeId::volumeGroup).distinct().toList());
        }
        GroupSnapshotId group = GroupSnapshotId.of(node, vg, name);
        try (KeyedLocks.Held held = locks.lock(group.toString())) {
            VolumeGroupContents contents = lvm.contents(vg).orElseThrow(() -> DriverException.notFound(
                    "volume group " + vg + " not found"));
            List<LogicalVolume> existing = members(contents, group);
            Set<String> wanted = sources.stream().map(VolumeId::toString).collect(Collectors.toCollection(
                    TreeSet::new));
            if (!existing.isEmpty()) {
                Set<String> have = existing.stream().map(lv -> lv.tag(VolumeTags.SOURCE).orElse(""))
                        .collect(Collectors.toCollection(TreeSet::new));
                if (!wanted.containsAll(have)) {
                    throw DriverException.alreadyExists("group snapshot \"" + Echo.of(name) + "\" already exists with"
                            + " other volumes: " + have);
                }
                if (have.equals(wanted)) {
                    // a member whose pool never took it would be taken at the pool's next change, outside the freeze
                    Set<String> queued = lvm.queuedInPool(vg, existing.stream().map(LogicalVolume::name).toList());
                    if (queued.isEmpty()) {
                        // all taken by the pool; if the last lvm was killed before the transaction id, finished now
                        lvm.finishHalfSentPoolChanges(vg, "a retried CreateVolumeGroupSnapshot found its members");
                        return describe(group, existing);
                    }
                    log.warn("group snapshot {}: members {} were recorded by LVM, but their pool never took them (an lvm"
                            + " killed before it sent the pool's message): taking the group again", group, queued);
                }
                // a crashed attempt left part of the group; what it took was not taken under one freeze
                existing.forEach(lv -> lvm.remove(vg, lv.name()));
            }
            List<LogicalVolume> origins = new ArrayList<>();
            for (VolumeId source : sources) {
                LogicalVolume origin = contents.find(source.lvName())
                        .filter(lv -> ManagedVolume.from(node, lv).isPresent())
                        .orElseThrow(() -> DriverException.notFound("source volume " + source + " does not exist"));
                if (!origin.isThin()) {
                    throw DriverException.failedPrecondition("source volume " + source + " is a linear LV: group"
                            + " snapshots need thin volumes (StorageClass parameter lvmType=thin)");
                }
                origins.add(origin);
            }
            takeFrozen(name, group, origins);
            return describe(group, members(lvm.contents(vg).orElseThrow(), group));
        }
    }

    private void takeFrozen(String name, GroupSnapshotId group, List<LogicalVolume> origins) {
        Map<LogicalVolume, PinnedMount> mounted = new LinkedHashMap<>();
        try {
            List<MountEntry> mounts = mountTable.read();
            for (LogicalVolume origin : origins) {
                // an origin that is not active (after a reboot, nothing is) is mounted nowhere: nothing to freeze
                DeviceNumber.ofActive(origin.devicePath()).flatMap(device -> pinStaging(mounts, device))
                        .ifPresent(m -> mounted.put(origin, m));
            }
            takeFrozen(name, group, origins, mounted);
        } finally {
            mounted.values().forEach(PinnedMount::close);
        }
    }

    /**
     * The device's filesystem where kubelet had it staged, pinned so that freeze and thaw reach that
     * filesystem whatever happens to the path's names; empty when it is not staged on this node.
     */
    private Optional<PinnedMount> pinStaging(List<MountEntry> mounts, DeviceNumber device) {
        for (MountEntry entry : mounts) {
            if (entry.device().equals(device) && paths.isStagingPath(entry.mountPoint())) {
                Optional<PinnedMount> pinned = mounter.pin(entry.mountPoint());
                if (pinned.isPresent() && pinned.get().entry().device().equals(device)) {
                    return pinned;
                }
                pinned.ifPresent(PinnedMount::close);
                throw DriverException.aborted("the staging mount of " + device + " at " + entry.mountPoint()
                        + " changed while the group snapshot was being prepared; retry");
            }
        }
        return Optional.empty();
    }

    private void takeFrozen(String name, GroupSnapshotId group, List<LogicalVolume> origins,
                            Map<LogicalVolume, PinnedMount> mounted) {
        String vg = group.volumeGroup();
        String freezing = group.token();
        mounted.keySet().forEach(lv -> lvm.replaceTags(vg, lv.name(), List.of(),
                List.of(Lvm.tag(FREEZING_TAG, freezing))));
        List<PinnedMount> frozen = new CopyOnWriteArrayList<>();
        AtomicBoolean limitPassed = new AtomicBoolean();
        List<String> made = new ArrayList<>();
        boolean complete = false;
        long started = System.nanoTime();
        ScheduledFuture<?> watchdog = watchdogs.schedule(() -> {
            limitPassed.set(true);
            frozen.forEach(freezer::thaw);
        }, FREEZE_LIMIT.toMillis(), TimeUnit.MILLISECONDS);
        try {
            for (PinnedMount mount : mounted.values()) {
                freezer.freeze(mount);
                frozen.add(mount);
            }
            for (LogicalVolume origin : origins) {
                if (limitPassed.get()) {
                    break;
                }
                String memberName = name + "/" + origin.name();
                String lvName = LvmNames.snapshotLvName(memberName);
                Map<String, String> tags = new LinkedHashMap<>();
                tags.put(VolumeTags.NAME, VolumeTags.encodeName(memberName));
                tags.put(VolumeTags.REQUESTED_BYTES, Long.toString(origin.sizeBytes()));
                tags.put(VolumeTags.SOURCE, VolumeId.issue(VolumeId.Kind.VOLUME, node, vg, origin.name()).toString());
                tags.put(GROUP_TAG, group.token());
                lvm.createThinSnapshot(vg, origin.name(), lvName, Lvm.tags(tags), false);
                made.add(lvName);
            }
            complete = !limitPassed.get() && made.size() == origins.size();
        } finally {
            watchdog.cancel(false);
            frozen.forEach(freezer::thaw);
            double seconds = (System.nanoTime() - started) / 1e9;
            FreezeMetrics.shared().record(seconds);
            log.info("group snapshot {}: {} filesystems frozen for {} ms while {} of {} members were snapshotted",
                    group, frozen.size(), Math.round(seconds * 1000), made.size(), origins.size());
            mounted.keySet().forEach(lv -> lvm.replaceTags(vg, lv.name(), List.of(Lvm.tag(FREEZING_TAG, freezing)),
                    List.of()));
            if (!complete) {
                // members taken outside one freeze are no group: none is kept
                made.forEach(lvName -> lvm.remove(vg, lvName));
            }
        }
        if (!complete) {
            throw DriverException.aborted("group snapshot " + group + " was not taken: its " + origins.size()
                    + " snapshots did not all complete within the " + FREEZE_LIMIT.toSeconds() + " s freeze limit;"
                    + " the filesystems are thawed and nothing was kept");
        }
    }

    public Optional<Csi.VolumeGroupSnapshot> get(String groupId) {
        return GroupSnapshotId.parse(groupId).filter(g -> g.isOn(node) && volumeGroups.contains(g.volumeGroup()))
                .flatMap(group -> lvm.contents(group.volumeGroup()).map(c -> members(c, group))
                        .filter(m -> !m.isEmpty()).map(m -> describe(group, m)));
    }

    /** Removes every member; absent is success. */
    public void delete(String groupId) {
        Optional<GroupSnapshotId> parsed = GroupSnapshotId.parse(groupId);
        if (parsed.isEmpty() || !volumeGroups.contains(parsed.get().volumeGroup())) {
            return;
        }
        GroupSnapshotId group = parsed.get();
        if (!group.isOn(node)) {
            throw DriverException.failedPrecondition("group snapshot " + group + " is on node " + group.node()
                    + "; this plugin serves node " + node);
        }
        try (KeyedLocks.Held held = locks.lock(group.toString())) {
            lvm.contents(group.volumeGroup()).map(c -> members(c, group)).orElse(List.of())
                    .forEach(lv -> lvm.remove(group.volumeGroup(), lv.name()));
        }
    }

    /**
     * Thaws the filesystems of volumes that a killed driver left tagged as freezing: at start-up,
     * from the volumes just indexed, so that no lvm command is added to the start (only an lvchange
     * for a tag actually found).
     */
    public void thawLeftFrozen(List<ManagedVolume> volumes) {
        List<MountEntry> mounts = mountTable.read();
        for (ManagedVolume volume : volumes) {
            LogicalVolume lv = volume.lv();
            Optional<String> freezing = lv.tag(FREEZING_TAG);
            if (freezing.isEmpty()) {
                continue;
            }
            // a volume a power cut left tagged is not active after the reboot: only its tag is left to clear
            try (PinnedMount mount = DeviceNumber.ofActive(lv.devicePath())
                    .flatMap(device -> pinStaging(mounts, device)).orElse(null)) {
                if (mount != null && freezer.thaw(mount)) {
                    log.warn("thawed {} ({}), left frozen by a group snapshot of an earlier run",
                            mount.entry().mountPoint(), lv.lvmPath());
                }
            }
            lvm.replaceTags(lv.volumeGroup(), lv.name(), List.of(Lvm.tag(FREEZING_TAG, freezing.get())), List.of());
        }
    }

    private static List<LogicalVolume> members(VolumeGroupContents contents, GroupSnapshotId group) {
        return contents.volumes().stream().filter(lv -> lv.tag(GROUP_TAG).filter(group.token()::equals).isPresent())
                .sorted(Comparator.comparing(LogicalVolume::name)).toList();
    }

    private Csi.VolumeGroupSnapshot describe(GroupSnapshotId group, List<LogicalVolume> members) {
        Csi.VolumeGroupSnapshot.Builder answer = Csi.VolumeGroupSnapshot.newBuilder()
                .setGroupSnapshotId(group.toString()).setReadyToUse(true);
        long created = Long.MAX_VALUE;
        for (LogicalVolume lv : members) {
            created = Math.min(created, lv.created().getEpochSecond());
            answer.addSnapshots(Csi.Snapshot.newBuilder()
                    .setSnapshotId(VolumeId.issue(VolumeId.Kind.SNAPSHOT, node, lv.volumeGroup(), lv.name()).toString())
                    .setSourceVolumeId(lv.tag(VolumeTags.SOURCE).orElse(""))
                    .setSizeBytes(lv.sizeBytes())
                    .setCreationTime(Timestamp.newBuilder().setSeconds(lv.created().getEpochSecond()))
                    .setReadyToUse(true)
                    .setGroupSnapshotId(group.toString()));
        }
        return answer.setCreationTime(Timestamp.newBuilder().setSeconds(created)).build();
    }
}
