package io.lvmqos.lvm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class HalfSentPoolChangeTest {

    /** lvm 2.03.16's line, captured in the guest after an lvm was killed at set_transaction_id (2026-12-06). */
    private static final String SAID =
            "Thin pool lvmqos-thinpool-tpool (254:2) already contain thin device with device_id 2.";

    /** LVM's record after a snapshot (id 2) of a volume (id 1) whose lvm was killed between the messages. */
    private static final HalfSentPoolChange.Recorded RECORDED =
            new HalfSentPoolChange.Recorded("thinpool", true, 4, Map.of("v1", 1L, "s1", 2L));

    @Test
    void theKernelPoolIsReadFromLvmsLine() {
        assertEquals(Optional.of("lvmqos-thinpool-tpool"), HalfSentPoolChange.kernelPoolOf(SAID));
        assertEquals(Optional.of("my--vg-my--pool-tpool"), HalfSentPoolChange.kernelPoolOf(
                "Thin pool my--vg-my--pool-tpool (254:12) already contain thin device with device_id 17."));
        assertEquals(Optional.empty(), HalfSentPoolChange.kernelPoolOf("Failed to process message \"create_snap 2 1\"."));
    }

    @Test
    void aKernelOneBehindHoldingEveryRecordedDeviceIsFinishable() {
        assertEquals(Optional.empty(), HalfSentPoolChange.whyNotFinishable(RECORDED, 3, Set.of(1L, 2L)));
    }

    /** A queued delete that was done: the kernel no longer holds the id, and LVM no longer records it. */
    @Test
    void aDoneDeleteIsFinishableToo() {
        assertEquals(Optional.empty(), HalfSentPoolChange.whyNotFinishable(
                new HalfSentPoolChange.Recorded("thinpool", true, 6, Map.of("v1", 1L)), 5, Set.of(1L)));
    }

    @Test
    void aKernelNotExactlyOneChangeBehindIsLeftAlone() {
        assertEquals(Optional.of("the kernel's transaction id is 4 and LVM's 4: not one change apart"),
                HalfSentPoolChange.whyNotFinishable(RECORDED, 4, Set.of(1L, 2L)));
        assertEquals(Optional.of("the kernel's transaction id is 2 and LVM's 4: not one change apart"),
                HalfSentPoolChange.whyNotFinishable(RECORDED, 2, Set.of(1L, 2L)));
    }

    @Test
    void aKernelWithADeviceLvmDoesNotRecordIsLeftAlone() {
        assertEquals(Optional.of("the kernel holds thin devices [1000] that LVM does not record and lacks [] that it"
                        + " does: not every queued message was done"),
                HalfSentPoolChange.whyNotFinishable(RECORDED, 3, Set.of(1L, 2L, 1000L)));
    }

    /** Two queued creates of which only the first was done: finishing would leave id 3 without a device. */
    @Test
    void aKernelMissingARecordedDeviceIsLeftAlone() {
        assertEquals(Optional.of("the kernel holds thin devices [] that LVM does not record and lacks [3] that it"
                        + " does: not every queued message was done"),
                HalfSentPoolChange.whyNotFinishable(new HalfSentPoolChange.Recorded("thinpool", true, 4, Map.of("v1", 1L, "s1", 2L, "s2", 3L)),
                        3, Set.of(1L, 2L)));
    }
}
