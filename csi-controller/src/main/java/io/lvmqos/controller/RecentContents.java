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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * Each volume group as the driver last read it with one {@code lvs}, kept up to date with the
 * driver's own thin creates and removes, so that a thin CreateVolume checks the pool's room and
 * answers without reading the group before or its new LV after: its lvcreate is then its only lvm
 * command, also when a hundred arrive at once.
 *
 * <p>A group's copy holds only while it is what lvm has as far as the driver can know. It was read
 * while none of the driver's changes ran on the group ({@link Lvm#changes}); every change the
 * driver has started on the group since is one this class handed out ({@link #reserve}, {@link
 * #reserveRemoval}), whose result is already in the copy; and it is at most {@link #MAX_AGE} old,
 * which bounds how long a change from outside the driver (an operator's lvextend of the pool,
 * another tool's LV) goes unseen. Any other change of the driver's (a linear volume, a snapshot, a
 * tag) makes the started count run ahead of the copy, which is then dropped; so is the copy when a
 * change it handed out fails. The next create reads the group again, one read for all the creates
 * that wait for it.
 *
 * <p>The room check and the reservation of the new LV happen under one lock, so creates at once
 * see each other: a stale copy can admit a thin volume the pool's over-provisioning ratio has no
 * room for only by what changed outside the driver, and never refuses one, since the caller
 * decides a refusal on a fresh read.
 */
final class RecentContents {

    static final Duration MAX_AGE = Duration.ofSeconds(10);

    private static final class Entry {
        private VolumeGroupContents contents;
        private final long baseStarted;
        private final long readAtNanos;
        private long handedOut;

        Entry(VolumeGroupContents contents, long baseStarted, long readAtNanos) {
            this.contents = contents;
            this.baseStarted = baseStarted;
            this.readAtNanos = readAtNanos;
        }
    }

    private final Function<String, Optional<VolumeGroupContents>> reader;
    private final Function<String, Lvm.Changes> changes;
    private final LongSupplier nanoClock;
    private final Map<String, Entry> groups = new HashMap<>();
    private final Map<String, ReentrantLock> reads = new ConcurrentHashMap<>();

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
     * Reads the group (one lvs) and keeps it when no change of the driver's ran beside the read.
     * Reads of one group run one at a time, so creates that arrive together wait for one read
     * instead of each reading beside the others' changes.
     */
    Optional<VolumeGroupContents> read(String volumeGroup) {
        ReentrantLock one = reads.computeIfAbsent(volumeGroup, vg -> new ReentrantLock());
        one.lock();
        try {
            Lvm.Changes before = changes.apply(volumeGroup);
            long readAt = nanoClock.getAsLong();
            Optional<VolumeGroupContents> contents = reader.apply(volumeGroup);
            Lvm.Changes after = changes.apply(volumeGroup);
            synchronized (this) {
                if (contents.isPresent() && before.quiet() && after.equals(before)) {
                    groups.put(volumeGroup, new Entry(contents.get(), before.started(), readAt));
                } else {
                    groups.remove(volumeGroup);
                }
            }
            return contents;
        } finally {
            one.unlock();
        }
    }

    /** Reads the group unless its copy holds; for callers that want a copy to reserve from. */
    void readIfStale(String volumeGroup) {
        ReentrantLock one = reads.computeIfAbsent(volumeGroup, vg -> new ReentrantLock());
        one.lock();
        try {
            synchronized (this) {
                if (current(volumeGroup) != null) {
                    return;
                }
            }
            read(volumeGroup);
        } finally {
            one.unlock();
        }
    }

    /**
     * Decides a thin create against the group's copy and, when {@code plan} gives one, reserves its
     * LV in the copy before the caller runs the lvcreate: the change is then the copy's own. Empty
     * when the copy does not hold or {@code plan} declines (the caller takes the full path).
     */
    synchronized <T> Optional<T> reserve(String volumeGroup, Function<VolumeGroupContents, Optional<T>> plan,
                                         Function<T, LogicalVolume> made) {
        Entry entry = current(volumeGroup);
        if (entry == null) {
            return Optional.empty();
        }
        Optional<T> planned = plan.apply(entry.contents);
        planned.ifPresent(p -> edit(entry, made.apply(p), null));
        return planned;
    }

    /** Takes the LV out of the group's copy before the caller removes it; false when there is no copy. */
    synchronized boolean reserveRemoval(String volumeGroup, String name) {
        Entry entry = current(volumeGroup);
        if (entry == null) {
            return false;
        }
        edit(entry, null, name);
        return true;
    }

    /**
     * Takes back a reserved LV whose lvcreate ran nothing (the group's bound let it wait too long):
     * the change still counts as handed out, as {@link Lvm#changes} counted it.
     */
    synchronized void cancel(String volumeGroup, String name) {
        Entry entry = current(volumeGroup);
        if (entry != null) {
            List<LogicalVolume> volumes = new ArrayList<>(entry.contents.volumes());
            volumes.removeIf(v -> v.name().equals(name));
            entry.contents = new VolumeGroupContents(entry.contents.group(), volumes);
        }
    }

    /** Drops the group's copy: a change it handed out failed, or the driver changed the group otherwise. */
    synchronized void forget(String volumeGroup) {
        groups.remove(volumeGroup);
    }

    /** The copy, as {@code lvs} will see it once the changes handed out have run; empty when it does not hold. */
    synchronized Optional<VolumeGroupContents> contents(String volumeGroup) {
        return Optional.ofNullable(current(volumeGroup)).map(entry -> entry.contents);
    }

    private Entry current(String volumeGroup) {
        Entry entry = groups.get(volumeGroup);
        if (entry == null) {
            return null;
        }
        // every change started since the read is one handed out here (a handed-out change may not
        // have started yet: its count comes after the reservation)
        boolean onlyOurs = changes.apply(volumeGroup).started() <= entry.baseStarted + entry.handedOut;
        if (!onlyOurs || nanoClock.getAsLong() - entry.readAtNanos > MAX_AGE.toNanos()) {
            groups.remove(volumeGroup);
            return null;
        }
        return entry;
    }

    private static void edit(Entry entry, LogicalVolume added, String removed) {
        List<LogicalVolume> volumes = new ArrayList<>(entry.contents.volumes());
        String name = added != null ? added.name() : removed;
        volumes.removeIf(v -> v.name().equals(name));
        if (added != null) {
            volumes.add(added);
        }
        entry.contents = new VolumeGroupContents(entry.contents.group(), volumes);
        entry.handedOut++;
    }
}
