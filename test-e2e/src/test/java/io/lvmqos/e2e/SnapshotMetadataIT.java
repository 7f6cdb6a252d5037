package io.lvmqos.e2e;

import io.lvmqos.e2e.guest.LargeDeltaCheck;
import io.lvmqos.e2e.guest.SnapshotMetadataCheck;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.GuestJUnit;
import io.lvmqos.e2e.uml.UmlGuest;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/** SnapshotMetadata against the ground truth of a thin pool's writes, in a guest. */
class SnapshotMetadataIT {

    @TestFactory
    Stream<DynamicTest> changedBlocksOnRealLvm() {
        UmlGuest.Builder guest = UmlGuest.builder()
                .name("snapshot-metadata")
                .disk("1G")
                .volumeGroup("lvmqos", 0)
                .thinPool("lvmqos", "thinpool", "512M")
                .cgroup(CgroupMode.V2)
                .timeout(Duration.ofMinutes(10));
        return GuestJUnit.dynamicTests(guest, SnapshotMetadataCheck.class);
    }

    /** A 7 GiB pool holding 102 400 allocated 64 KiB chunks; the ubd file stays sparse but for the writes. */
    @TestFactory
    Stream<DynamicTest> aLargeDeltaStreams() {
        UmlGuest.Builder guest = UmlGuest.builder()
                .name("large-delta")
                .disk("8G")
                .volumeGroup("lvmqos", 0)
                .thinPool("lvmqos", "thinpool", "7G")
                .cgroup(CgroupMode.V2)
                .timeout(Duration.ofMinutes(15));
        return GuestJUnit.dynamicTests(guest, LargeDeltaCheck.class);
    }
}
