package io.lvmqos.guarantee;

import io.lvmqos.cgroup.IoCounters;
import io.lvmqos.cgroup.IoPressure;
import io.lvmqos.device.DeviceNumber;
import io.lvmqos.volume.Guarantee;
import io.lvmqos.volume.VolumeId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches whether the floors io.cost was set up to keep are kept: every pass (the node's periodic
 * rebalance of floored disks), each pod with floors on a disk is sampled: its I/O on the disk from
 * its cgroup's {@code io.stat}, the time it spent stalled on I/O from its {@code io.pressure}, and
 * the time the disk had I/O in flight from its {@code stat}. Over the last {@value #WINDOW_SECONDS}
 * s, a pod that got less than {@value #SHORT_PERCENT}% of a floor, in that floor's own unit and
 * direction, while it was asking for more, is short of it. Asking is seen as the disk busy nearly
 * all the window or the pod stalled on I/O half of it: a pod with I/O in flight through libaio or
 * io_uring waits for completions without counting as stalled, so the disk's busy time is the
 * broader sign; a pod that keeps too few I/Os in flight to reach its floor on a busy disk is
 * reported too (a floor assumes the pod asks for it). A disk slower than its model shows this way:
 * io.cost shares out what the model says, and a share of less is less.
 *
 * <p>What it finds is in memory only, for the volume condition of NodeGetVolumeStats, a metric,
 * and one log line per disk when floors there start or stop being short.
 */
public final class FloorWatch {

    private static final Logger log = LoggerFactory.getLogger(FloorWatch.class);

    static final int WINDOW_SECONDS = 10;
    static final Duration WINDOW = Duration.ofSeconds(WINDOW_SECONDS);
    static final int SHORT_PERCENT = 90;
    /** The share of the window a pod must have stalled on I/O for its shortfall to count... */
    static final double WAITING = 0.5;
    /** ...or the share of it the disk must have had I/O in flight. */
    static final double DISK_BUSY = 0.9;

    /** What the watch reads of a cgroup: its counters on a disk and its I/O stall time so far. */
    public interface CgroupReader {
        Optional<Sample> sample(Path cgroup, DeviceNumber disk);
    }

    /**
     * One reading of a cgroup, with its disk's busy time (stat's io_ticks) read at the same moment.
     *
     * @param atNanos when, on the monotonic clock ({@link System#nanoTime()}): only the time between
     *     two readings is used, and a step of the wall clock must not stretch or reverse a window
     */
    public record Sample(long atNanos, IoCounters counters, long waitedMicros, long diskBusyMillis) {
    }

    /**
     * A pod with floors on a disk: the floors of its volumes there, summed per kind.
     *
     * @param volumes the pod's floored volumes on the disk
     */
    public record FlooredPod(String podUid, Path cgroup, DeviceNumber disk, List<VolumeId> volumes, Floors floors) {
    }

    /** Floors summed per kind and direction; a pod's volumes on one disk add up. */
    public record Floors(long readIops, long writeIops, long iops, long readBps, long writeBps, long bps) {

        public static final Floors NONE = new Floors(0, 0, 0, 0, 0, 0);

        public static Floors of(Guarantee g) {
            return new Floors(g.readIopsFloor().orElse(0), g.writeIopsFloor().orElse(0), g.iopsFloor().orElse(0),
                    g.readBpsFloor().orElse(0), g.writeBpsFloor().orElse(0), g.bpsFloor().orElse(0));
        }

        public Floors plus(Floors o) {
            return new Floors(readIops + o.readIops, writeIops + o.writeIops, iops + o.iops, readBps + o.readBps,
                    writeBps + o.writeBps, bps + o.bps);
        }
    }

    private record Key(Path cgroup, DeviceNumber disk) {
    }

    private final CgroupReader reader;
    private final Map<Key, Deque<Sample>> history = new HashMap<>();
    private final Map<VolumeId, String> unmet = new ConcurrentHashMap<>();
    private final Map<DeviceNumber, Set<VolumeId>> shortOnDisk = new HashMap<>();

    public FloorWatch(CgroupReader reader) {
        this.reader = reader;
    }

    /**
     * Reads a cgroup v2 directory's {@code io.stat} (the disk's line) and {@code io.pressure} (the
     * "some" total), and the disk's busy time from sysfs; empty when any is gone or unreadable (a
     * pod ending between passes).
     */
    public static CgroupReader cgroupFs(Path sys, LongSupplier nanoTime) {
        return (cgroup, disk) -> {
            try {
                String stat = Files.readString(cgroup.resolve("io.stat"));
                String pressure = Files.readString(cgroup.resolve("io.pressure"));
                long busy = new DiskQueue(sys, disk).counters().busyMillis();
                return Optional.of(new Sample(nanoTime.getAsLong(), IoCounters.fromIoStat(stat, disk),
                        IoPressure.parse(pressure).someMicros(), busy));
            } catch (IOException | RuntimeException e) {
                return Optional.empty();
            }
        };
    }

    /** Why the volume's floor is not being kept now; empty when it is, or nothing is known. */
    public Optional<String> unmet(VolumeId volume) {
        return Optional.ofNullable(unmet.get(volume));
    }

    /** How many volumes of each group are short of a floor now. */
    public Map<String, Long> unmetByGroup() {
        return unmet.keySet().stream().collect(Collectors.groupingBy(VolumeId::volumeGroup, Collectors.counting()));
    }

    /**
     * One pass: samples every floored pod on the disks given and judges each over the last window.
     * Pods and disks no longer given are forgotten.
     */
    public synchronized void observe(Collection<DeviceNumber> disks, Collection<FlooredPod> pods) {
        Map<DeviceNumber, Set<VolumeId>> nowShort = new LinkedHashMap<>();
        Map<DeviceNumber, List<String>> reasons = new LinkedHashMap<>();
        Set<Key> seen = new HashSet<>();
        for (FlooredPod pod : pods) {
            Key key = new Key(pod.cgroup(), pod.disk());
            seen.add(key);
            Optional<Sample> sample = reader.sample(pod.cgroup(), pod.disk());
            if (sample.isEmpty()) {
                continue;
            }
            Deque<Sample> samples = history.computeIfAbsent(key, k -> new ArrayDeque<>());
            samples.addLast(sample.get());
            long now = sample.get().atNanos();
            // keep the newest sample at least a window old, and what came after it
            while (samples.size() > 2 && now - second(samples).atNanos() >= WINDOW.toNanos()) {
                samples.removeFirst();
            }
            Sample oldest = samples.peekFirst();
            if (now - oldest.atNanos() < WINDOW.toNanos()) {
                continue;
            }
            Optional<String> shortfall = judge(pod.floors(), oldest, sample.get());
            for (VolumeId volume : pod.volumes()) {
                if (shortfall.isPresent()) {
                    unmet.put(volume, shortfall.get());
                    nowShort.computeIfAbsent(pod.disk(), d -> new LinkedHashSet<>()).add(volume);
                } else {
                    unmet.remove(volume);
                }
            }
            shortfall.ifPresent(why -> reasons.computeIfAbsent(pod.disk(), d -> new ArrayList<>())
                    .add("pod " + pod.podUid() + " (" + pod.volumes() + "): " + why));
        }
        history.keySet().retainAll(seen);
        Set<VolumeId> present = pods.stream().flatMap(p -> p.volumes().stream()).collect(Collectors.toSet());
        unmet.keySet().retainAll(present);
        for (DeviceNumber disk : disks) {
            Set<VolumeId> before = shortOnDisk.getOrDefault(disk, Set.of());
            Set<VolumeId> after = nowShort.getOrDefault(disk, Set.of());
            if (!after.isEmpty() && !after.equals(before)) {
                log.warn("floors on disk {} are not being kept: {}; the disk does less than its io.cost model says,"
                        + " or the pods' I/O is of a kind the model prices low (docs/guarantees.md)", disk,
                        reasons.get(disk));
            } else if (after.isEmpty() && !before.isEmpty()) {
                log.info("floors on disk {} are kept again", disk);
            }
        }
        shortOnDisk.keySet().retainAll(disks);
        disks.forEach(disk -> shortOnDisk.put(disk, nowShort.getOrDefault(disk, Set.of())));
    }

    private static Sample second(Deque<Sample> samples) {
        var it = samples.iterator();
        it.next();
        return it.next();
    }

    /**
     * Why the pod fell short over the window from {@code from} to {@code to}, or empty: neither the
     * disk was busy nor the pod stalled (it asked for no more than it got), or it got at least
     * {@value #SHORT_PERCENT}% of each floor.
     */
    static Optional<String> judge(Floors floors, Sample from, Sample to) {
        double seconds = (to.atNanos() - from.atNanos()) / 1e9;
        if (seconds <= 0) {
            return Optional.empty();
        }
        double waited = (to.waitedMicros() - from.waitedMicros()) / 1e6 / seconds;
        double busy = (to.diskBusyMillis() - from.diskBusyMillis()) / 1e3 / seconds;
        if (waited < WAITING && busy < DISK_BUSY) {
            return Optional.empty();
        }
        IoCounters a = from.counters();
        IoCounters b = to.counters();
        double readOps = (b.readOps() - a.readOps()) / seconds;
        double writeOps = (b.writeOps() - a.writeOps()) / seconds;
        double readBytes = (b.readBytes() - a.readBytes()) / seconds;
        double writeBytes = (b.writeBytes() - a.writeBytes()) / seconds;
        List<String> missed = new ArrayList<>();
        check(missed, "readIOPSFloor", floors.readIops(), readOps, "IOPS");
        check(missed, "writeIOPSFloor", floors.writeIops(), writeOps, "IOPS");
        check(missed, "iopsFloor", floors.iops(), readOps + writeOps, "IOPS");
        check(missed, "readBPSFloor", floors.readBps(), readBytes, "bytes/s");
        check(missed, "writeBPSFloor", floors.writeBps(), writeBytes, "bytes/s");
        check(missed, "bpsFloor", floors.bps(), readBytes + writeBytes, "bytes/s");
        if (missed.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(String.join(", ", missed) + String.format(" over the last %.0f s, while the disk was busy"
                + " %.0f%% and the pod stalled on I/O %.0f%% of the time", seconds, Math.min(100, busy * 100),
                Math.min(100, waited * 100)));
    }

    private static void check(List<String> missed, String key, long floor, double got, String unit) {
        if (floor > 0 && got * 100 < floor * SHORT_PERCENT) {
            missed.add(String.format("%s=%d not met: %.0f %s delivered", key, floor, got, unit));
        }
    }
}
