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

    private Optional<LogicalVolume> reserve(String name) {
        return recent.reserve(VG, contents -> contents.find(name).isPresent() ? Optional.empty()
                : Optional.of(thin(name)), lv -> lv);
    }

    private List<String> names() {
        return recent.contents(VG).orElseThrow().volumes().stream().map(LogicalVolume::name).toList();
    }

    @Test
    void aReadWithNoChangeBesideItStandsForTheNextUntilItIsTooOld() {
        assertTrue(recent.contents(VG).isEmpty(), "nothing read yet");
        recent.read(VG);
        assertEquals(lvs, recent.contents(VG).orElseThrow());
        clock.set(RecentContents.MAX_AGE.toNanos() + 1);
        assertTrue(recent.contents(VG).isEmpty(), "older than the bound");
    }

    @Test
    void aReadBesideARunningChangeIsNotKept() {
        change(1, 0);
        recent.read(VG);
        assertTrue(recent.contents(VG).isEmpty());
    }

    @Test
    void aChangeTheCopyDidNotHandOutDropsIt() {
        recent.read(VG);
        change(1, 1);
        assertTrue(recent.contents(VG).isEmpty());
        assertTrue(reserve("vol_b").isEmpty(), "nothing to reserve from");
    }

    @Test
    void reservedCreatesAndRemovesAreInTheCopyBeforeTheyRunAndTheirChangesAreItsOwn() {
        recent.read(VG);
        assertTrue(reserve("vol_b").isPresent());
        assertTrue(reserve("vol_c").isPresent(), "a second create at once sees the first");
        assertEquals(List.of("vol_a", "vol_b", "vol_c"), names());
        assertTrue(reserve("vol_b").isEmpty(), "the plan sees the reserved name");
        change(1, 0);
        change(2, 1);
        assertTrue(recent.reserveRemoval(VG, "vol_a"));
        change(3, 3);
        assertEquals(List.of("vol_b", "vol_c"), names());
        change(4, 4);
        assertTrue(recent.contents(VG).isEmpty(), "a fourth change nobody reserved");
        assertEquals(1, reads, "one lvs for all of it");
    }

    @Test
    void aCreateThatRanNothingIsTakenBackAndAFailedOneDropsTheCopy() {
        recent.read(VG);
        reserve("vol_b");
        change(1, 1);
        recent.cancel(VG, "vol_b");
        assertEquals(List.of("vol_a"), names());
        reserve("vol_c");
        change(2, 2);
        recent.forget(VG);
        assertTrue(recent.contents(VG).isEmpty());
    }

    @Test
    void createsThatFindNoCopyShareOneRead() {
        recent.readIfStale(VG);
        recent.readIfStale(VG);
        assertEquals(1, reads);
        clock.set(RecentContents.MAX_AGE.toNanos() + 1);
        recent.readIfStale(VG);
        assertEquals(2, reads);
    }
}
