package io.lvmqos.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.e2e.guest.GuestSmokeCheck;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.GuestJUnit;
import io.lvmqos.e2e.uml.GuestRun;
import io.lvmqos.e2e.uml.UmlGuest;
import io.lvmqos.e2e.uml.UmlGuestException;
import io.lvmqos.e2e.uml.UmlGuestException.Failure;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/** The real-kernel test bed's own tests: a guest that works, and each way a guest run fails. */
class UmlGuestIT {

    @TestFactory
    Stream<DynamicTest> smokeChecksPassInTheGuest() {
        UmlGuest.Builder guest = UmlGuest.builder()
                .name("smoke")
                .disk("4G")
                .volumeGroup("lvmqos", 0)
                .thinPool("lvmqos", "thinpool", "2G")
                .cgroup(CgroupMode.V2);
        return GuestJUnit.dynamicTests(guest, GuestSmokeCheck.class);
    }

    @Test
    void payloadExitCodeIsReported() {
        GuestRun run = UmlGuest.builder().name("exit3").payload("echo leaving; exit 3").build().run();

        assertEquals(3, run.exitCode());
        assertTrue(run.payloadLog().contains("leaving"), run.payloadLog());
        UmlGuestException failure = assertThrows(UmlGuestException.class, run::requireSuccess);
        assertEquals(Failure.PAYLOAD_FAILED, failure.failure());
    }

    @Test
    void payloadPastTheTimeoutIsKilledAndReportedAsATimeout() throws IOException {
        UmlGuest guest = UmlGuest.builder()
                .name("timeout")
                .payload("echo sleeping; sleep 600")
                .timeout(Duration.ofSeconds(30))
                .build();

        long started = System.nanoTime();
        UmlGuestException failure = assertThrows(UmlGuestException.class, guest::run);
        Duration took = Duration.ofNanos(System.nanoTime() - started);

        assertEquals(Failure.PAYLOAD_TIMEOUT, failure.failure(), failure.getMessage());
        assertTrue(failure.getMessage().contains("sleeping"), "console tail in the message: " + failure.getMessage());
        assertTrue(took.compareTo(Duration.ofSeconds(300)) < 0, "killed, not waited for: took " + took);
        if (onPath("uml_mconsole")) {
            String console = Files.readString(failure.runDir().orElseThrow().resolve("console.log"));
            assertTrue(console.contains("sysrq: Show Blocked State"), "the guest's tasks are dumped before it is killed:\n"
                    + console);
        }
        assertEquals(0, UmlGuest.processesOf(failure.runDir().orElseThrow()).size(), "UML processes left behind");
    }

    @Test
    void volumeGroupFailureIsReportedAsSuch() {
        UmlGuest guest = UmlGuest.builder()
                .name("vg-fails")
                .disk("1G")
                .volumeGroup("lvmqos", 0)
                .thinPool("lvmqos", "thinpool", "8G") // larger than its disk
                .payload("true")
                .build();

        UmlGuestException failure = assertThrows(UmlGuestException.class, guest::run);

        assertEquals(Failure.VOLUME_GROUP, failure.failure(), failure.getMessage());
        assertTrue(failure.getMessage().contains("lvcreate"), failure.getMessage());
    }

    @Test
    void moduleFailureIsReportedAsSuch() {
        UmlGuest guest = UmlGuest.builder().name("module-fails").modules("dm-no-such-module").payload("true").build();

        UmlGuestException failure = assertThrows(UmlGuestException.class, guest::run);

        assertEquals(Failure.MODULES, failure.failure(), failure.getMessage());
        assertTrue(failure.getMessage().contains("dm-no-such-module"), failure.getMessage());
    }

    private static boolean onPath(String command) {
        return Stream.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
                .anyMatch(dir -> !dir.isEmpty() && Files.isExecutable(Path.of(dir, command)));
    }
}
