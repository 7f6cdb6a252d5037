package io.lvmqos.controller;

import io.lvmqos.lvm.LogicalVolume;
import io.lvmqos.lvm.Lvm;
import io.lvmqos.lvm.VolumeGroupContents;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * Each volume group as the driver last read it with one {@code lvs}, so that a thin CreateVolume
 * right after another can check the pool's room without reading the group again and answer
 * without reading its new LV back: the lvcreate is then its only lvm command. A group's entry
 * holds only while it is exactly what lvm has, as far as the driver can know: it was read while no
 * change of the driver's ran on the group ({@link Lvm#changes}), every change since is one this
 * class was told the result of (a thin LV made, a thin LV removed), and it is at most
 * {@link #MAX_AGE} old, which bounds what a change from outside the driver (an operator's
 * lvextend of the pool, another tool's LV) can go unseen. Anything else forgets the entry, and
 * the next create reads the group again.
 *
 * <p>What a stale entry could do is admit a thin volume that the pool's over-provisioning ratio no
 * longer has room for, as a create racing another did before; it can never refuse one, since a
 * create that the entry refuses is decided again on a fresh read.
 */
final class RecentContents {

    static final Duration MAX_AGE = Duration.ofSeconds(10);

    /** A group's contents and the driver's change count they are current for. */
    record Recent(VolumeGroupContents contents, Lvm.Changes changes) {
    }

    private record Entry(VolumeGroupContents contents, Lvm.Changes changes, long readAtNanos) {
    }

    private final Function<String, Optional<VolumeGroupContents>> reader;
    private final Function<String, Lvm.Changes> changes;
    private final LongSupplier nanoClock;
    private final Map<String, Entry> groups = new HashMap<>();

    /**
     * @param reader one lvs of a group ({@link Lvm#contents})
     * @param changes the driver's change count on a group ({@link Lvm#changes})
     */
    RecentContents(Function<String, Optional<VolumeGroupContents>> reader, Function<String, Lvm.Changes> changes,
                   LongSupplier nanoClock) {
        this.reader = reader;
        this.changes = changes;
        this.nanoClock = nanoClock;
    }

    RecentContents(Lvm lvm) {
        this(lvm::contents, lvm::changes, System::nanoTime);
    }

    /**
     * Reads the group (one lvs), and keeps it when no change of the driver's ran beside the read;
     * with the change count from before the read, for {@link #made}.
     */
    Optional<Recent> read(String volumeGroup) {
        Lvm.Changes before = changes.apply(volumeGroup);
        long readAt = nanoClock.getAsLong();
        Optional<VolumeGroupContents> contents = reader.apply(volumeGroup);
        Lvm.Changes after = changes.apply(volumeGroup);
        synchronized (this) {
            if (contents.isPresent() && before.quiet() && after.equals(before)) {
                groups.put(volumeGroup, new Entry(contents.get(), before, readAt));
            } else {
                groups.remove(volumeGroup);
            }
        }
        return contents.map(read -> new Recent(read, before));
    }

    /** The group as last read, if it still holds (see the class comment). */
    synchronized Optional<Recent> recent(String volumeGroup) {
        Entry entry = groups.get(volumeGroup);
        if (entry == null) {
            return Optional.empty();
        }
        if (nanoClock.getAsLong() - entry.readAtNanos() > MAX_AGE.toNanos()
                || !changes.apply(volumeGroup).equals(entry.changes())) {
            groups.remove(volumeGroup);
            return Optional.empty();
        }
        return Optional.of(new Recent(entry.contents(), entry.changes()));
    }

    /** The driver made {@code lv} by one change, started after {@code before}. */
    synchronized void made(String volumeGroup, Lvm.Changes before, LogicalVolume lv) {
        update(volumeGroup, before, volumes -> {
            volumes.removeIf(v -> v.name().equals(lv.name()));
            volumes.add(lv);
        });
    }

    /** The driver removed the LV {@code name} by one change, started after {@code before}. */
    synchronized void removed(String volumeGroup, Lvm.Changes before, String name) {
        update(volumeGroup, before, volumes -> volumes.removeIf(v -> v.name().equals(name)));
    }

    /** Forgets the group: the driver changed it in a way this class does not follow. */
    synchronized void forget(String volumeGroup) {
        groups.remove(volumeGroup);
    }

    private void update(String volumeGroup, Lvm.Changes before, Consumer<List<LogicalVolume>> edit) {
        Entry entry = groups.get(volumeGroup);
        Lvm.Changes now = changes.apply(volumeGroup);
        // only the one change this call made ran since the entry was current, and it has finished
        if (entry == null || !entry.changes().equals(before) || !now.quiet() || now.started() != before.started() + 1) {
            groups.remove(volumeGroup);
            return;
        }
        List<LogicalVolume> volumes = new ArrayList<>(entry.contents().volumes());
        edit.accept(volumes);
        groups.put(volumeGroup, new Entry(new VolumeGroupContents(entry.contents().group(), volumes), now,
                entry.readAtNanos()));
    }
}
