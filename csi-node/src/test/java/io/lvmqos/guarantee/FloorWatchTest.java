package io.lvmqos.guarantee;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.cgroup.IoCounters;
import io.lvmqos.device.DeviceNumber;
import io.lvmqos.guarantee.FloorWatch.Floors;
import io.lvmqos.guarantee.FloorWatch.FlooredPod;
import io.lvmqos.guarantee.FloorWatch.Sample;
import io.lvmqos.volume.VolumeId;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** When a floor counts as not kept: the pod wanted more than it got, and got less than 90% of the floor. */
class FloorWatchTest {

    /** A monotonic reading near where nanoTime's values wrap, so that only differences can work. */
    static final long T0 = Long.MAX_VALUE - 5_000_000_000L;
    static final Floors IOPS_200 = new Floors(0, 0, 200, 0, 0, 0);
    static final DeviceNumber DISK = DeviceNumber.parse("254:0");

    static Sample at(int second, long reads, long writes, long waitedMicros) {
        return at(second, reads, writes, waitedMicros, 0);
    }

    static Sample at(int second, long reads, long writes, long waitedMicros, long diskBusyMillis) {
        return new Sample(T0 + second * 1_000_000_000L, new IoCounters(reads * 4096, writes * 4096, reads, writes),
                waitedMicros, diskBusyMillis);
    }

    @Test
    void aWaitingPodBelowNinetyPercentOfItsFloorIsShortAndTheMessageSaysByHowMuch() {
        // 10 s: 1200 reads (120 IOPS), waited 9.5 s
        Optional<String> why = FloorWatch.judge(IOPS_200, at(0, 0, 0, 0), at(10, 1200, 0, 9_500_000));
        assertTrue(why.isPresent());
        assertEquals("iopsFloor=200 not met: 120 IOPS delivered over the last 10 s, while the disk was busy 0% and the"
                + " pod stalled on I/O 95% of the time", why.get());
    }

    @Test
    void aPodThatDidNotWaitOnAnIdleDiskAskedForNoMoreAndIsNotShort() {
        assertEquals(Optional.empty(), FloorWatch.judge(IOPS_200, at(0, 0, 0, 0), at(10, 100, 0, 1_000_000, 3_000)));
    }

    @Test
    void aBusyDiskCountsAsAskingForAPodWhoseAsynchronousIoDoesNotStall() {
        // libaio and io_uring wait for completions without stalling: 10 s, disk busy 9.8 s
        Optional<String> why = FloorWatch.judge(IOPS_200, at(0, 0, 0, 0, 0), at(10, 500, 0, 200_000, 9_800));
        assertTrue(why.orElseThrow().contains("50 IOPS delivered") && why.get().contains("busy 98%"), why.get());
    }

    @Test
    void ninetyPercentOfTheFloorIsKept() {
        assertEquals(Optional.empty(), FloorWatch.judge(IOPS_200, at(0, 0, 0, 0), at(10, 1800, 0, 10_000_000)));
        assertTrue(FloorWatch.judge(IOPS_200, at(0, 0, 0, 0), at(10, 1790, 0, 10_000_000)).isPresent());
    }

    @Test
    void eachFloorIsJudgedInItsOwnDirectionAndUnit() {
        Floors writes = new Floors(0, 100, 0, 0, 0, 0);
        // plenty of reads do not make up for too few writes
        Optional<String> why = FloorWatch.judge(writes, at(0, 0, 0, 0), at(10, 5000, 500, 10_000_000));
        assertTrue(why.orElseThrow().startsWith("writeIOPSFloor=100 not met: 50 IOPS"), why.get());
        Floors bytes = new Floors(0, 0, 0, 0, 0, 8L << 20);
        assertTrue(FloorWatch.judge(bytes, at(0, 0, 0, 0), at(10, 10_000, 0, 10_000_000)).orElseThrow()
                .startsWith("bpsFloor=8388608 not met: 4096000 bytes/s"));
    }

    @Test
    void aVolumeIsShortOnlyOnceAWholeWindowIsSampledAndRecoversWithTheNextGoodWindow() {
        Map<Integer, Sample> samples = new HashMap<>();
        int[] now = {0};
        FloorWatch watch = new FloorWatch((cgroup, disk) -> Optional.ofNullable(samples.get(now[0])));
        VolumeId volume = VolumeId.issue(VolumeId.Kind.VOLUME, "node", "lvmqos", "vol_a");
        FlooredPod pod = new FlooredPod("uid", Path.of("/sys/fs/cgroup/kubepods/poduid"), DISK, List.of(volume),
                IOPS_200);
        long reads = 0;
        long waited = 0;
        for (now[0] = 0; now[0] <= 10; now[0] += 2) {
            samples.put(now[0], at(now[0], reads, 0, waited));
            watch.observe(List.of(DISK), List.of(pod));
            if (now[0] < 10) {
                assertEquals(Optional.empty(), watch.unmet(volume), "no judgement before a whole window");
            }
            reads += 200; // 100 IOPS
            waited += 2_000_000;
        }
        assertTrue(watch.unmet(volume).orElseThrow().contains("100 IOPS delivered"));
        assertEquals(Map.of("lvmqos", 1L), watch.unmetByGroup());
        for (; now[0] <= 24; now[0] += 2) {
            samples.put(now[0], at(now[0], reads, 0, waited));
            watch.observe(List.of(DISK), List.of(pod));
            reads += 500; // 250 IOPS
            waited += 2_000_000;
        }
        assertEquals(Optional.empty(), watch.unmet(volume), "a window of 250 IOPS keeps the floor");
        watch.observe(List.of(DISK), List.of());
        assertEquals(Map.of(), watch.unmetByGroup(), "a volume no longer published is forgotten");
    }
}
