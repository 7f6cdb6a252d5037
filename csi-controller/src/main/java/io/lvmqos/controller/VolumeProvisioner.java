package io.lvmqos.controller;

import csi.v1.Csi;
import io.lvmqos.errors.DriverException;
import io.lvmqos.errors.Echo;
import io.lvmqos.exec.Deadline;
import io.lvmqos.lvm.DeviceUsers;
import io.lvmqos.lvm.LogicalVolume;
import io.lvmqos.lvm.Lvm;
import io.lvmqos.lvm.VolumeGroup;
import io.lvmqos.lvm.VolumeGroupContents;
import io.lvmqos.volume.Guarantee;
import io.lvmqos.volume.GuaranteePolicy;
import io.lvmqos.volume.KeyedLocks;
import io.lvmqos.volume.LvmNames;
import io.lvmqos.volume.ManagedVolume;
import io.lvmqos.volume.PodLimitsApplier;
import io.lvmqos.volume.ThinPoolSpace;
import io.lvmqos.volume.VolumeCatalog;
import io.lvmqos.volume.VolumeId;
import io.lvmqos.volume.VolumeParameters;
import io.lvmqos.volume.VolumeParameters.LvmType;
import io.lvmqos.volume.VolumeTags;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes and removes LVs for volumes and snapshots, under a per-LV lock, with LVM as the only
 * state: whether a volume exists, and what it was made from, is read from LVM every time.
 */
public final class VolumeProvisioner {

    private static final Logger log = LoggerFactory.getLogger(VolumeProvisioner.class);

    /** What CreateVolume asks for once validated. */
    public record VolumeRequest(String csiName, CapacityRequest capacity, VolumeParameters parameters,
                                String parametersDigest, Optional<VolumeId> source) {
    }

    private final Lvm lvm;
    private final ResumableWipe wipe;
    private final VolumeCatalog catalog;
    private final KeyedLocks locks;
    private final DeviceUsers users;
    private final PodLimitsApplier pods;
    private final GuaranteePolicy guarantees;
    private final Supplier<Deadline> callDeadline;
    private final RecentContents recent;

    public VolumeProvisioner(Lvm lvm, ResumableWipe wipe, VolumeCatalog catalog, KeyedLocks locks, DeviceUsers users,
                             PodLimitsApplier pods, GuaranteePolicy guarantees, Supplier<Deadline> callDeadline) {
        this.guarantees = guarantees;
        this.callDeadline = callDeadline;
        this.lvm = lvm;
        this.wipe = wipe;
        this.catalog = catalog;
        this.locks = locks;
        this.users = users;
        this.pods = pods;
        this.recent = new RecentContents(lvm);
    }

    public VolumeCatalog catalog() {
        return catalog;
    }

    public String volumeGroupFor(VolumeParameters parameters) {
        String vg = parameters.volumeGroup().orElse(catalog.volumeGroups().getFirst());
        if (!catalog.volumeGroups().contains(vg)) {
            throw DriverException.invalidArgument("volume group " + vg + " is not managed by this driver (managed: "
                    + catalog.volumeGroups() + ")");
        }
        return vg;
    }

    /**
     * Makes the volume, or recognises it from a previous attempt. Three lvm commands: one lvs
     * of the whole group (existence, extent size, free space, the pool), the lvcreate, and an
     * lvs of the new LV; a new thin volume without a floor or a source, decided against the group's
     * copy ({@link RecentContents}), only the lvcreate.
     */
    public ManagedVolume createVolume(VolumeRequest request) {
        String vg = volumeGroupFor(request.parameters());
        String lvName = LvmNames.volumeLvName(request.csiName());
        Guarantee guarantee = request.parameters().qos().guarantee();
        // a floor is admitted against the group's other floors: two creates must not both take the last of it
        try (KeyedLocks.Held held = locks.lock(vg + "/" + lvName);
             KeyedLocks.Held admission = guarantee.hasFloor() ? locks.lock(admissionKey(vg)) : null) {
            Optional<ManagedVolume> fromRecent = createThinFromRecent(request, vg, lvName);
            if (fromRecent.isPresent()) {
                return fromRecent.get();
            }
            // the full path reads the whole group: creates queue for the group's change turn before
            // their read, not holding a read each while they wait (100 at once at 500 LVs ran the
            // heap out), and the read stays true up to this create's own change
            return lvm.holdingChangeTurn(vg, () -> createOnFullRead(request, vg, lvName, guarantee));
        }
    }

    private ManagedVolume createOnFullRead(VolumeRequest request, String vg, String lvName, Guarantee guarantee) {
        VolumeGroupContents contents = contents(vg);
        Optional<LogicalVolume> existing = contents.find(lvName);
        if (existing.isPresent()) {
            Optional<ManagedVolume> adopted = adopt(request, existing.get());
            if (adopted.isPresent()) {
                return adopted.get();
            }
            contents = contents(vg);
        }
        VolumeGroup group = contents.group();
        long size = request.capacity().sizeFor(group.extentSizeBytes());
        guarantee.requireConsistent(request.parameters().qos().forSize(size));
        guarantees.admit(vg, guarantee, GuaranteePolicy.guaranteesOf(catalog.node(), contents.volumes(), lvName));
        Map<String, String> tags = tagsOf(request, size);
        if (request.source().isPresent()) {
            VolumeId source = request.source().get();
            LogicalVolume origin = sourceVolume(source, vg, contents);
            if (size < origin.sizeBytes()) {
                throw DriverException.outOfRange("the requested size " + size + " is smaller than the source's "
                        + origin.sizeBytes() + " bytes");
            }
            checkThinRoom(contents, origin.pool().orElseThrow(), request.parameters().overprovisionRatio(), size);
            tags.put(VolumeTags.SOURCE, source.toString());
            lvm.createThinSnapshot(vg, origin.name(), lvName, Lvm.tags(tags), true);
            if (size > origin.sizeBytes()) {
                lvm.extend(vg, lvName, size);
            }
        } else if (request.parameters().lvmType() == LvmType.THIN) {
            String pool = request.parameters().thinPool();
            checkThinRoom(contents, pool, request.parameters().overprovisionRatio(), size);
            lvm.createThin(vg, pool, lvName, size, Lvm.tags(tags));
        } else {
            if (size > group.freeBytes()) {
                throw DriverException.resourceExhausted("volume group " + vg + " has " + group.freeBytes()
                        + " bytes free, " + size + " needed");
            }
            lvm.createLinear(vg, lvName, size, Lvm.tags(tags));
        }
        return reread(vg, lvName);
    }

    private static Map<String, String> tagsOf(VolumeRequest request, long size) {
        Map<String, String> tags = new LinkedHashMap<>();
        tags.put(VolumeTags.NAME, VolumeTags.encodeName(request.csiName()));
        tags.put(VolumeTags.REQUESTED_BYTES, Long.toString(size));
        tags.put(VolumeTags.PARAMETERS, request.parametersDigest());
        tags.putAll(VolumeTags.qosTags(request.parameters().qos()));
        if (request.source().isPresent() || request.parameters().lvmType() == LvmType.THIN) {
            // ControllerExpandVolume gets no parameters: the ratio this volume was admitted under is kept
            tags.put(VolumeTags.OVERPROVISION_RATIO, request.parameters().overprovisionRatio().toPlainString());
        }
        return tags;
    }

    /** A thin create decided against the group's copy: the LV it will make, and its tags in order. */
    private record PlannedThin(LogicalVolume lv, Map<String, String> tags) {
    }

    /**
     * A new thin volume decided against the group's copy ({@link RecentContents}) and made with the
     * lvcreate alone; empty, with nothing changed, when the full path must decide: another kind of
     * request, no copy to be had, an LV of that name in it, or a pool the copy finds no room in (so
     * that only a fresh read refuses). A name taken meanwhile answers AlreadyExists from lvm, and the
     * full path then looks at that LV as for any retry.
     */
    private Optional<ManagedVolume> createThinFromRecent(VolumeRequest request, String vg, String lvName) {
        Guarantee guarantee = request.parameters().qos().guarantee();
        if (request.parameters().lvmType() != LvmType.THIN || request.source().isPresent() || guarantee.hasFloor()) {
            return Optional.empty();
        }
        String pool = request.parameters().thinPool();
        Function<VolumeGroupContents, Optional<PlannedThin>> plan = contents -> {
            if (contents.find(lvName).isPresent()) {
                return Optional.empty();
            }
            long size = request.capacity().sizeFor(contents.group().extentSizeBytes());
            guarantee.requireConsistent(request.parameters().qos().forSize(size));
            guarantees.admit(vg, guarantee, List.of());
            if (!roomWhateverWasWritten(contents, pool, request.parameters().overprovisionRatio(), size)) {
                return Optional.empty();
            }
            Map<String, String> tags = tagsOf(request, size);
            return Optional.of(new PlannedThin(Lvm.madeThin(vg, lvName, size, tags, thinPool(contents, pool),
                    Instant.now()), tags));
        };
        Optional<PlannedThin> planned = recent.reserve(vg, plan, PlannedThin::lv);
        if (planned.isEmpty()) {
            recent.readIfStale(vg);
            planned = recent.reserve(vg, plan, PlannedThin::lv);
        }
        if (planned.isEmpty()) {
            return Optional.empty();
        }
        LogicalVolume lv = planned.get().lv();
        try {
            lvm.createThin(vg, pool, lvName, lv.sizeBytes(), Lvm.tags(planned.get().tags()));
        } catch (DriverException.AlreadyExists taken) {
            recent.forget(vg);
            return Optional.empty();
        } catch (DriverException.Aborted waitedTooLong) {
            // the group's bound or the driver's shutdown stopped it before lvm ran it
            recent.cancel(vg, lvName);
            throw waitedTooLong;
        } catch (RuntimeException failed) {
            recent.forget(vg);
            throw failed;
        }
        ManagedVolume volume = ManagedVolume.from(catalog.node(), lv).orElseThrow();
        catalog.put(volume);
        return Optional.of(volume);
    }

    /** The key of the lock that admissions of floors in a volume group take, after the volume's own. */
    static String admissionKey(String volumeGroup) {
        // a slash-free key of its own: no LV path ("vg/lv") can equal it
        return "floors of " + volumeGroup;
    }

    private VolumeGroupContents contents(String vg) {
        return recent.read(vg).orElseThrow(() -> DriverException.failedPrecondition(
                "volume group " + vg + " not found on node " + catalog.node()));
    }

    /**
     * An LV of this name exists: a retry of the same request, or a different request reusing the
     * name. Empty when it was the remnant of a create cut short that this call removed, to be made anew.
     */
    private Optional<ManagedVolume> adopt(VolumeRequest request, LogicalVolume lv) {
        ManagedVolume volume = ManagedVolume.from(catalog.node(), lv).orElseThrow(() -> DriverException.internal(
                "LV " + lv.lvmPath() + " exists but does not carry this driver's tags"));
        Optional<String> wiped = lv.tag(VolumeTags.WIPED);
        if (wiped.isPresent()) {
            throw DriverException.aborted("volume \"" + Echo.of(request.csiName()) + "\" is being deleted: its LV " + lv.lvmPath()
                    + " is being zeroed (" + wiped.get() + " of " + lv.sizeBytes() + " bytes done); create it again"
                    + " once DeleteVolume has finished");
        }
        if (!volume.csiName().equals(request.csiName())) {
            throw DriverException.internal("LV " + lv.lvmPath() + " belongs to volume \"" + Echo.of(volume.csiName()) + "\"");
        }
        boolean sameSource = volume.source().equals(request.source().map(VolumeId::toString));
        if (!volume.parametersDigest().equals(request.parametersDigest()) || !sameSource) {
            throw DriverException.alreadyExists("volume \"" + Echo.of(request.csiName()) + "\" already exists with other "
                    + "parameters or another content source");
        }
        if (!request.capacity().accepts(volume.requestedBytes())) {
            throw DriverException.alreadyExists("volume \"" + Echo.of(request.csiName()) + "\" already exists with "
                    + volume.requestedBytes() + " bytes, outside the requested capacity range");
        }
        // finish what a crashed attempt may have left half done: the grow of a restore, activation
        if (lv.sizeBytes() < volume.requestedBytes()) {
            lvm.extend(lv.volumeGroup(), lv.name(), volume.requestedBytes());
        }
        if (!lv.active() && !lvm.activateIfInPool(lv.volumeGroup(), lv.name())) {
            // LVM committed the LV but the pool never committed its thin device: the node went down
            // inside lvcreate. No CreateVolume answered with it (lvcreate activates it before it
            // returns), it holds no data, and it can never be activated: removed, and made again.
            log.warn("LV {} of volume \"{}\" has no thin device in its pool (a create cut short by a crash): "
                    + "removing it to create it again", lv.lvmPath(), Echo.of(request.csiName()));
            lvm.remove(lv.volumeGroup(), lv.name());
            return Optional.empty();
        }
        if (lv.isThin()) {
            // an lvm killed between the pool's message and its transaction id left the device made
            // and the pool one change behind: finished here, before this answer, since lvm's next
            // removal in the pool would fail on it and leave a device LVM no longer records
            lvm.finishHalfSentPoolChanges(lv.volumeGroup(), "a retried CreateVolume found its LV");
        }
        return Optional.of(reread(lv.volumeGroup(), lv.name()));
    }

    private LogicalVolume sourceVolume(VolumeId source, String vg, VolumeGroupContents contents) {
        if (!source.isOn(catalog.node())) {
            throw DriverException.invalidArgument("the content source " + source + " is on " + source.nodeDescription()
                    + ", this volume would be on node " + catalog.node() + ": LVM volumes can only be copied on "
                    + "their own node");
        }
        if (!source.volumeGroup().equals(vg)) {
            throw DriverException.invalidArgument("content source " + source + " is in volume group "
                    + source.volumeGroup() + ", the new volume would be in " + vg);
        }
        LogicalVolume origin = contents.find(source.lvName())
                .filter(lv -> ManagedVolume.from(catalog.node(), lv).isPresent())
                .orElseThrow(() -> DriverException.notFound("content source " + source + " does not exist"));
        if (!origin.isThin()) {
            throw DriverException.invalidArgument("content source " + source + " is a linear LV: snapshots and clones "
                    + "need a thin volume (StorageClass parameter lvmType=thin)");
        }
        return origin;
    }

    /** A thin pool must exist, zero new blocks, and stay within its over-provisioning ratio and its data space. */
    private void checkThinRoom(VolumeGroupContents contents, String pool, BigDecimal ratio, long size) {
        LogicalVolume poolLv = thinPool(contents, pool);
        requireZeroing(poolLv);
        Optional<String> outOfSpace = ThinPoolSpace.problemOf(poolLv);
        if (outOfSpace.isPresent()) {
            throw DriverException.resourceExhausted("no new thin volume: " + outOfSpace.get());
        }
        ThinPoolRoom room = ThinPoolRoom.of(poolLv, contents.volumes(), ratio);
        if (size > room.availableBytes()) {
            throw DriverException.resourceExhausted("thin pool " + poolLv.lvmPath() + " can take "
                    + room.availableBytes() + " more bytes (" + room.describe() + "; data "
                    + ThinPoolSpace.shown(poolLv.dataPercent()) + ", metadata " + ThinPoolSpace.shown(poolLv.metadataPercent())
                    + "), " + size + " requested; extend the pool (lvextend -L +<size> " + poolLv.lvmPath() + ")");
        }
    }

    /**
     * Whether the copy shows room for {@code size} however much the pool's volumes have written
     * since it was read: writes change no LVM metadata, so the copy's data percentage may be stale,
     * and the room it bounds is taken at its worst. At ratio 1 that is the same room; in an
     * over-provisioned pool that has promised more than its size, the full path reads the pool.
     */
    private static boolean roomWhateverWasWritten(VolumeGroupContents contents, String pool, BigDecimal ratio,
                                                  long size) {
        Optional<LogicalVolume> poolLv = contents.find(pool).filter(LogicalVolume::isThinPool);
        if (poolLv.isEmpty() || !poolLv.get().zeroing().orElse(false) || ThinPoolSpace.problemOf(poolLv.get()).isPresent()) {
            return false;
        }
        return size <= ThinPoolRoom.of(poolLv.get(), contents.volumes(), ratio).assumingAllPromisedWritten()
                .availableBytes();
    }

    static LogicalVolume thinPool(VolumeGroupContents contents, String pool) {
        String vg = contents.group().name();
        return contents.find(pool).filter(LogicalVolume::isThinPool)
                .orElseThrow(() -> DriverException.failedPrecondition("thin pool " + vg + "/" + pool
                        + " does not exist: create it first (lvcreate --type thin-pool -Zy -L <size> -n " + pool + " "
                        + vg + ")"));
    }

    static void requireZeroing(LogicalVolume pool) {
        if (!pool.zeroing().orElse(false)) {
            throw DriverException.failedPrecondition("thin pool " + pool.lvmPath() + " does not zero new blocks, so "
                    + "a new volume could read an old one's data: enable it with lvchange --zero y " + pool.lvmPath());
        }
    }

    public long availableBytes(String vg, VolumeParameters parameters) {
        if (parameters.lvmType() == LvmType.THIN) {
            List<LogicalVolume> lvs = lvm.logicalVolumes(vg);
            return lvs.stream().filter(lv -> lv.name().equals(parameters.thinPool()) && lv.isThinPool()).findFirst()
                    .map(pool -> ThinPoolRoom.of(pool, lvs, parameters.overprovisionRatio()).availableBytes())
                    .orElse(0L);
        }
        return lvm.volumeGroup(vg).map(VolumeGroup::freeBytes).orElse(0L);
    }

    /**
     * Removes a volume; a linear LV is zeroed first, from where an earlier call stopped (see
     * {@link ResumableWipe}), and this call answers ABORTED, progress saved, when its deadline would
     * pass first. Absent is success.
     */
    public void deleteVolume(VolumeId id) {
        try (KeyedLocks.Held held = locks.lock(id.lvmPath())) {
            if (removedAsKnownThin(id)) {
                return;
            }
            Optional<LogicalVolume> found = lvm.logicalVolume(id.volumeGroup(), id.lvName());
            if (found.isEmpty()) {
                catalog.forget(id);
                return;
            }
            LogicalVolume lv = found.get();
            if (lv.open()) {
                String holders = users.describe(lv.devicePath());
                throw DriverException.failedPrecondition("volume " + id + " is in use: LV " + lv.lvmPath() + " is open"
                        + (holders.isEmpty() ? " (held by a process or another device)" : " (" + holders + ")")
                        + "; unpublish and unstage it first");
            }
            if (!lv.isThin() && lv.segmentType() == LogicalVolume.SegmentType.LINEAR) {
                if (!lv.active()) {
                    lvm.activate(lv.volumeGroup(), lv.name());
                }
                zeroBeforeRemoval(lv);
            }
            lvm.remove(id.volumeGroup(), id.lvName());
            catalog.forget(id);
        }
    }

    /**
     * A volume the catalog knows as thin is removed with one lvremove and no lvs before it: a thin
     * LV needs no zeroing (its pool zeroes new blocks), it never becomes another kind of LV, and its
     * name is made and removed only under this volume's lock, where the catalog is kept. What the
     * lvs was for, lvm answers itself: an absent LV is reported as such (success), an open one is
     * refused. False when the catalog does not know the volume as thin, or lvm refused because the
     * LV is in use, so that the full path reads it and says who holds it.
     */
    private boolean removedAsKnownThin(VolumeId id) {
        if (catalog.indexed(id).filter(volume -> volume.lv().isThin()).isEmpty()) {
            return false;
        }
        boolean reserved = recent.reserveRemoval(id.volumeGroup(), id.lvName());
        try {
            lvm.removeIfPresent(id.volumeGroup(), id.lvName());
        } catch (DriverException.FailedPrecondition refused) {
            recent.forget(id.volumeGroup());
            return false;
        } catch (RuntimeException failed) {
            if (reserved) {
                recent.forget(id.volumeGroup());
            }
            throw failed;
        }
        catalog.forget(id);
        return true;
    }

    private void zeroBeforeRemoval(LogicalVolume lv) {
        Optional<Long> started = lv.tag(VolumeTags.WIPED).map(Long::parseLong);
        if (started.isEmpty()) {
            // first, so that no CreateVolume of the same name adopts a half-zeroed LV between attempts
            lvm.replaceTags(lv.volumeGroup(), lv.name(), List.of(), List.of(Lvm.tag(VolumeTags.WIPED, "0")));
        }
        AtomicLong saved = new AtomicLong(started.orElse(0L));
        wipe.run(lv.devicePath(), lv.sizeBytes(), saved.get(), wiped -> {
            long before = saved.get();
            if (wiped != before) {
                lvm.replaceTags(lv.volumeGroup(), lv.name(), List.of(Lvm.tag(VolumeTags.WIPED, Long.toString(before))),
                        List.of(Lvm.tag(VolumeTags.WIPED, Long.toString(wiped))));
                saved.set(wiped);
            }
        }, callDeadline.get().remaining());
    }

    /**
     * Grows a volume's LV, or refuses before any change when there is no room (see
     * {@link VolumeExpansion}). Per-GiB limits follow the new size at once in the pods using it: for
     * a raw block volume no NodeExpandVolume follows to do it.
     */
    public ManagedVolume expandVolume(VolumeId id, Csi.CapacityRange range) {
        try (KeyedLocks.Held held = locks.lock(id.lvmPath())) {
            if (!catalog.volumeGroups().contains(id.volumeGroup())) {
                throw DriverException.notFound("volume " + id + " does not exist: volume group " + id.volumeGroup()
                        + " is not managed by this driver");
            }
            LogicalVolume grown = new VolumeExpansion(lvm).grow(id, range);
            ManagedVolume volume = ManagedVolume.from(catalog.node(), grown)
                    .filter(v -> v.id().kind() == VolumeId.Kind.VOLUME)
                    .orElseThrow(() -> DriverException.notFound("volume " + id + " does not exist"));
            catalog.put(volume);
            if (!volume.limits().isUnlimited()) {
                pods.applyToPodsUsing(volume);
            }
            return volume;
        }
    }

    public ManagedVolume createSnapshot(String csiName, VolumeId source) {
        String lvName = LvmNames.snapshotLvName(csiName);
        String vg = source.volumeGroup();
        if (!catalog.volumeGroups().contains(vg)) {
            throw DriverException.notFound("source volume " + source + " does not exist");
        }
        try (KeyedLocks.Held held = locks.lock(vg + "/" + lvName)) {
            VolumeGroupContents contents = lvm.contents(vg).orElseThrow(() -> DriverException.notFound(
                    "source volume " + source + " does not exist: volume group " + vg + " not found"));
            LogicalVolume origin = sourceVolume(source, vg, contents);
            Optional<LogicalVolume> existing = contents.find(lvName);
            if (existing.isPresent()) {
                ManagedVolume snapshot = ManagedVolume.from(catalog.node(), existing.get())
                        .orElseThrow(() -> DriverException.internal("LV " + existing.get().lvmPath()
                                + " exists but does not carry this driver's tags"));
                if (!snapshot.source().equals(Optional.of(source.toString())) || !snapshot.csiName().equals(csiName)) {
                    throw DriverException.alreadyExists("snapshot \"" + Echo.of(csiName) + "\" already exists for another "
                            + "source volume (" + snapshot.source().orElse("none") + ")");
                }
                if (lvm.queuedInPool(vg, List.of(lvName)).isEmpty()) {
                    // taken by the pool; if its lvm was killed before the transaction id, finished now
                    lvm.finishHalfSentPoolChanges(vg, "a retried CreateSnapshot found its LV");
                    return snapshot;
                }
                // the pool would take it at its next change, after this answer, with the data of then
                log.warn("snapshot LV {}/{} was recorded by LVM, but its pool never took it (an lvm killed before it sent "
                        + "the pool's message): removing it to take it now", vg, lvName);
                lvm.remove(vg, lvName);
            }
            Map<String, String> tags = new LinkedHashMap<>();
            tags.put(VolumeTags.NAME, VolumeTags.encodeName(csiName));
            tags.put(VolumeTags.REQUESTED_BYTES, Long.toString(origin.sizeBytes()));
            tags.put(VolumeTags.SOURCE, source.toString());
            lvm.createThinSnapshot(vg, origin.name(), lvName, Lvm.tags(tags), false);
            return reread(vg, lvName);
        }
    }

    public void deleteSnapshot(VolumeId id) {
        try (KeyedLocks.Held held = locks.lock(id.lvmPath())) {
            if (lvm.logicalVolume(id.volumeGroup(), id.lvName()).isPresent()) {
                lvm.remove(id.volumeGroup(), id.lvName());
            }
            catalog.forget(id);
        }
    }

    private ManagedVolume reread(String vg, String lvName) {
        LogicalVolume lv = lvm.logicalVolume(vg, lvName).orElseThrow(() -> DriverException.internal(
                "LV " + vg + "/" + lvName + " vanished right after it was made"));
        ManagedVolume volume = ManagedVolume.from(catalog.node(), lv).orElseThrow(() -> DriverException.internal(
                "LV " + lv.lvmPath() + " was made without this driver's tags"));
        catalog.put(volume);
        return volume;
    }
}
