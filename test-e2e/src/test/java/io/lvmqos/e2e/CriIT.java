package io.lvmqos.e2e;

import io.lvmqos.e2e.guest.CriCheck;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.GuestJUnit;
import io.lvmqos.e2e.uml.UmlGuest;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The driver's own image and pods run by containerd and runc in the UML node, one guest per cgroup
 * version. The images are built once per run by scripts/build-image (cached under target/image).
 */
class CriIT {

    private static Path repository;

    @BeforeAll
    static void buildImages() throws IOException, InterruptedException {
        ProjectImages.build();
        repository = ProjectImages.repository();
    }

    private static UmlGuest.Builder guest(String name, CgroupMode mode) {
        return UmlGuest.builder()
                .name(name)
                .memory("2560M")
                .disk("4G")
                .disk("2G") // containerd's content and snapshots
                .volumeGroup("lvmqos", 0)
                .cgroup(mode)
                .env("LVMQOS_IMAGE_DIR", repository.resolve("target/image").toString())
                .env("LVMQOS_REPOSITORY", repository.toString())
                .timeout(Duration.ofMinutes(10));
    }

    @TestFactory
    Stream<DynamicTest> containerdOnCgroupV2() {
        return GuestJUnit.dynamicTests(guest("cri-v2", CgroupMode.V2), CriCheck.class);
    }

    @TestFactory
    Stream<DynamicTest> containerdOnCgroupV1() {
        return GuestJUnit.dynamicTests(guest("cri-v1", CgroupMode.V1), CriCheck.class);
    }
}
