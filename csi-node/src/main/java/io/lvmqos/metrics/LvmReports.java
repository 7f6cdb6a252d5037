package io.lvmqos.metrics;

import io.lvmqos.lvm.LogicalVolume;
import io.lvmqos.lvm.Lvm;
import io.lvmqos.lvm.VolumeGroup;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The last vgs/lvs report of the volume groups, for the metrics endpoint. A scrape never runs
 * lvm itself: it gets the report at hand and, when that is older than the maximum age, starts
 * one refresh in the background for the next scrape. So a scrape never waits behind an LVM lock
 * (a long lvcreate or a wipe), lvm runs at most once per maximum age, and not at all when nobody
 * scrapes.
 */
final class LvmReports {

    /** One volume group and its thin pools. */
    record VolumeGroupReport(VolumeGroup group, List<LogicalVolume> thinPools) {
        VolumeGroupReport {
            thinPools = List.copyOf(thinPools);
        }
    }

    /** What the reports said, and when they finished. */
    record Snapshot(Instant takenAt, List<VolumeGroupReport> groups) {
        Snapshot {
            groups = List.copyOf(groups);
        }
    }

    static final Duration MAX_AGE = Duration.ofSeconds(30);

    private static final Logger log = LoggerFactory.getLogger(LvmReports.class);

    private final Supplier<List<VolumeGroupReport>> reader;
    private final Duration maxAge;
    private final Clock clock;
    private final Executor refresher;
    private final AtomicBoolean refreshing = new AtomicBoolean();
    private volatile Thread refreshingOn;
    private volatile boolean closed;
    private volatile Optional<Instant> lastAttempt = Optional.empty();
    private volatile Optional<Snapshot> latest = Optional.empty();

    LvmReports(Supplier<List<VolumeGroupReport>> reader, Duration maxAge, Clock clock, Executor refresher) {
        this.reader = reader;
        this.maxAge = maxAge;
        this.clock = clock;
        this.refresher = refresher;
    }

    /** Reports of this host's volume groups, refreshed on a virtual thread. */
    static LvmReports of(Lvm lvm, List<String> volumeGroups) {
        List<String> groups = List.copyOf(volumeGroups);
        return new LvmReports(() -> read(lvm, groups), MAX_AGE, Clock.systemUTC(),
                task -> Thread.ofVirtual().name("metrics-lvm-report").start(task));
    }

    /** The latest report, if one has finished; starts a refresh when it is due. Never blocks. */
    Optional<Snapshot> latest() {
        refreshIfDue();
        return latest;
    }

    /**
     * Starts a refresh unless one is running or the last one started less than the maximum age
     * ago; a failed refresh waits as long as a successful one, so a broken lvm is not hammered.
     */
    void refreshIfDue() {
        if (closed) {
            return;
        }
        Instant now = clock.instant();
        Optional<Instant> last = lastAttempt;
        if (last.isPresent() && now.isBefore(last.get().plus(maxAge))) {
            return;
        }
        if (!refreshing.compareAndSet(false, true)) {
            return;
        }
        lastAttempt = Optional.of(now);
        try {
            refresher.execute(this::refresh);
        } catch (RejectedExecutionException e) {
            refreshing.set(false);
        }
    }

    private void refresh() {
        refreshingOn = Thread.currentThread();
        try {
            if (closed) {
                return;
            }
            List<VolumeGroupReport> groups = reader.get();
            latest = Optional.of(new Snapshot(clock.instant(), groups));
        } catch (RuntimeException e) {
            log.warn("metrics: cannot report the volume groups: {}", e.getMessage());
        } finally {
            refreshingOn = null;
            refreshing.set(false);
        }
    }

    /**
     * Starts no more refreshes and stops the one running, waiting at most {@code bound} for it:
     * its lvs may be waiting for a volume group's lock someone else holds, and must not outlive
     * the plugin (interrupted, the command runner stops it with SIGTERM and reaps it).
     */
    void close(Duration bound) {
        closed = true;
        Thread running = refreshingOn;
        if (running == null) {
            return;
        }
        running.interrupt();
        try {
            if (!running.join(bound)) {
                log.warn("metrics: the volume group report did not stop within {} ms", bound.toMillis());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A group that cannot be reported is left out, so its gauges disappear rather than go stale. */
    private static List<VolumeGroupReport> read(Lvm lvm, List<String> volumeGroups) {
        List<VolumeGroupReport> reports = new ArrayList<>();
        for (String name : volumeGroups) {
            try {
                // one lvs with the group's fields, not vgs and lvs: each reads all the VG's metadata
                lvm.contents(name).ifPresent(contents -> reports.add(new VolumeGroupReport(contents.group(),
                        contents.volumes().stream().filter(LogicalVolume::isThinPool).toList())));
            } catch (RuntimeException e) {
                log.warn("metrics: cannot report volume group {}: {}", name, e.getMessage());
            }
        }
        return reports;
    }
}
