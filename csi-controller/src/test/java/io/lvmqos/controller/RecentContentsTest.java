package io.lvmqos.controller;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.lvm.LogicalVolume;
import io.lvmqos.lvm.Lvm;
import io.lvmqos.lvm.VolumeGroup;
import io.lvmqos.lvm.VolumeGroupContents;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * When a group's last read may stand in for a new one. The counts and the clock are the test's:
 * what they stand for (lvm's reports and the driver's change count) is exercised on real lvm by
 * every thin CreateVolume in the guest's ControllerCheck.
 */
class RecentContentsTest {

    private static final String VG = "vg0";
    private final Map<String, Lvm.Changes> changes = new HashMap<>();
    private final AtomicLong clock = new AtomicLong();
    private int reads;
    private final VolumeGroupContents lvs = new VolumeGroupContents(new VolumeGroup(VG, 1L << 30, 1L << 29, 4L << 20),
            List.of(thin("vol_a")));
    private final RecentContents recent = new RecentContents(vg -> {
        reads++;
        return Optional.of(lvs);
    }, vg -> changes.getOrDefault(vg, new Lvm.Changes(0, 0)), clock::get);

    private static final LogicalVolume POOL = new LogicalVolume(VG, "pool", 1L << 29,
            LogicalVolume.SegmentType.THIN_POOL, true, false, false, Optional.of(true), Map.of(), Optional.empty(),
            Optional.empty(), Instant.EPOCH, Path.of("/dev/mapper/vg0-pool"), OptionalDouble.of(0),
            OptionalDouble.of(0), LogicalVolume.PoolHealth.OK);

    private static LogicalVolume thin(String name) {
        return Lvm.madeThin(VG, name, 8L << 20, Map.of(), POOL, Instant.EPOCH);
    }

    private void change(long started, long finished) {
        changes.put(VG, new Lvm.Changes(started, finished));
    }

    @Test
    void aReadWithNoChangeBesideItStandsForTheNextUntilItIsTooOld() {
        assertTrue(recent.recent(VG).isEmpty(), "nothing read yet");
        recent.read(VG);
        assertEquals(lvs, recent.recent(VG).orElseThrow().contents());
        clock.set(RecentContents.MAX_AGE.toNanos() + 1);
        assertTrue(recent.recent(VG).isEmpty(), "older than the bound");
    }

    @Test
    void aReadBesideARunningChangeIsNotKept() {
        change(1, 0);
        recent.read(VG);
        assertTrue(recent.recent(VG).isEmpty());
    }

    @Test
    void anyChangeTheEntryWasNotToldOfForgetsIt() {
        recent.read(VG);
        change(1, 1);
        assertTrue(recent.recent(VG).isEmpty());
    }

    @Test
    void theDriversOwnCreateAndRemoveKeepItCurrent() {
        RecentContents.Recent read = recent.read(VG).orElseThrow();
        change(1, 1);
        recent.made(VG, read.changes(), thin("vol_b"));
        RecentContents.Recent after = recent.recent(VG).orElseThrow();
        assertEquals(List.of("vol_a", "vol_b"), after.contents().volumes().stream().map(LogicalVolume::name).toList());
        change(2, 2);
        recent.removed(VG, after.changes(), "vol_a");
        assertEquals(List.of("vol_b"),
                recent.recent(VG).orElseThrow().contents().volumes().stream().map(LogicalVolume::name).toList());
        assertEquals(1, reads, "one lvs for all of it");
    }

    @Test
    void aCreateBesideAnotherChangeForgetsTheGroup() {
        RecentContents.Recent read = recent.read(VG).orElseThrow();
        change(2, 2); // another change ran beside this create's lvcreate
        recent.made(VG, read.changes(), thin("vol_b"));
        assertTrue(recent.recent(VG).isEmpty());
        change(3, 2); // or is still running
        recent.read(VG);
        assertTrue(recent.recent(VG).isEmpty());
    }

    @Test
    void aCreateFromAnEntryThatWasReplacedMeanwhileForgetsTheGroup() {
        RecentContents.Recent stale = recent.read(VG).orElseThrow();
        change(1, 1);
        recent.read(VG);
        change(2, 2);
        recent.made(VG, stale.changes(), thin("vol_b"));
        assertTrue(recent.recent(VG).isEmpty(), "counted from another read");
    }
}
