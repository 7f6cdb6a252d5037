package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.CommandRunner;
import io.lvmqos.exec.Deadline;
import io.lvmqos.lvm.LogicalVolume;
import io.lvmqos.lvm.Lvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The driver's {@link Lvm} running its commands in long-lived lvm shells, against the guest's real
 * lvm: answers as a fork's, one shell reused for a run of commands, as many shells as commands at
 * once and no more, a shell that died between commands replaced without the caller seeing it, a
 * command stuck on the group's lock stopped at its deadline with its shell, and nothing left running
 * or on disk once the shells are closed.
 */
public class LvmShellCheck {

    private static final long MIB = 1024 * 1024;
    private final ProcessHandle self = ProcessHandle.current();
    private Path workDir;
    private Lvm lvm;
    /** The deadline of the call the test plays, as the driver's service layer would give it. */
    private volatile Deadline callDeadline = Deadline.NONE;
    private String vg;

    @BeforeEach
    void shells() throws Exception {
        GuestEnv.assumeInGuest();
        vg = GuestEnv.volumeGroup();
        workDir = Files.createTempDirectory("lvm-shell-check");
        lvm = Lvm.withShells(new CommandRunner(Map.of(), () -> callDeadline), workDir);
    }

    @AfterEach
    void closeAndClean() throws Exception {
        if (lvm != null) {
            lvm.closeShells();
        }
        for (int i = 0; i < 8; i++) {
            GuestCommand.run("lvm", "lvremove", "-q", "-y", vg + "/shell-" + i);
        }
    }

    private List<ProcessHandle> shellsOfThisJvm() {
        return DriverLvmProcesses.all(self).stream().filter(DriverLvmProcesses::isShell).toList();
    }

    @Test
    void commandsAnswerAsForksAndOneShellServesARun() {
        String pool = GuestEnv.thinPool().orElseThrow();
        lvm.createThin(vg, pool, "shell-0", 8 * MIB, List.of("lvmqos.test=a"));
        List<ProcessHandle> shells = shellsOfThisJvm();
        assertEquals(1, shells.size(), "one shell for one command at a time: " + shells);
        LogicalVolume made = lvm.logicalVolume(vg, "shell-0").orElseThrow();
        assertEquals(8 * MIB, made.sizeBytes());
        assertEquals("a", made.tag("lvmqos.test").orElseThrow());
        assertEquals(made, Lvm.onThisHost(new CommandRunner()).logicalVolume(vg, "shell-0").orElseThrow(),
                "the shell's report reads as the fork's");
        lvm.replaceTags(vg, "shell-0", List.of("lvmqos.test=a"), List.of("lvmqos.test=b"));
        assertEquals("b", lvm.logicalVolume(vg, "shell-0").orElseThrow().tag("lvmqos.test").orElseThrow());
        assertTrue(lvm.contents(vg).orElseThrow().find("shell-0").isPresent());
        assertTrue(lvm.removeIfPresent(vg, "shell-0"));
        assertFalse(lvm.removeIfPresent(vg, "shell-0"), "not found is told apart through the shell");
        assertEquals(shells, shellsOfThisJvm(), "the same shell ran every command");
        assertThrows(DriverException.AlreadyExists.class, () -> {
            lvm.createThin(vg, pool, "shell-1", 8 * MIB, List.of());
            lvm.createThin(vg, pool, "shell-1", 8 * MIB, List.of());
        });
    }

    /**
     * What the driver records of a thin LV it has just made, without reading it back, is what lvm
     * reports of it; only the creation time may differ, by the second lvm took.
     */
    @Test
    void aThinLvAsTheDriverRecordsItIsTheLvAsLvmReportsIt() {
        String pool = GuestEnv.thinPool().orElseThrow();
        Map<String, String> tags = Map.of("lvmqos.name", "dm9sLWE", "lvmqos.requested", "8388608");
        lvm.createThin(vg, pool, "shell-2", 8 * MIB, Lvm.tags(tags));
        LogicalVolume recorded = Lvm.madeThin(vg, "shell-2", 8 * MIB, tags,
                lvm.logicalVolume(vg, pool).orElseThrow(), Instant.now());
        LogicalVolume reported = lvm.logicalVolume(vg, "shell-2").orElseThrow();
        assertTrue(Duration.between(reported.created(), recorded.created()).abs().toSeconds() <= 2,
                reported.created() + " against " + recorded.created());
        assertEquals(reported, new LogicalVolume(recorded.volumeGroup(), recorded.name(), recorded.sizeBytes(),
                recorded.segmentType(), recorded.active(), recorded.open(), recorded.activationSkip(), recorded.zeroing(),
                recorded.tags(), recorded.pool(), recorded.origin(), reported.created(), recorded.devicePath(),
                recorded.dataPercent(), recorded.metadataPercent(), recorded.health()));
    }

    @Test
    void commandsAtOnceGetAShellEachUpToTheGroupsBound() throws Exception {
        String pool = GuestEnv.thinPool().orElseThrow();
        ExecutorService threads = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> calls = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                String name = "shell-" + i;
                calls.add(threads.submit((Callable<Void>) () -> {
                    lvm.createThin(vg, pool, name, 8 * MIB, List.of());
                    return null;
                }));
            }
            for (Future<?> call : calls) {
                call.get(5, TimeUnit.MINUTES);
            }
        } finally {
            threads.shutdownNow();
        }
        int shells = shellsOfThisJvm().size();
        System.out.println("8 creates at once ran in " + shells + " lvm shells");
        assertTrue(shells >= 1 && shells <= 4, "at most the group's bound of 4 shells: " + shells);
        assertEquals(8, lvm.logicalVolumes(vg).stream().filter(lv -> lv.name().startsWith("shell-")).count());
    }

    @Test
    void aShellKilledBetweenCommandsIsReplacedUnseen() throws Exception {
        lvm.volumeGroup(vg).orElseThrow();
        ProcessHandle first = shellsOfThisJvm().getFirst();
        first.destroyForcibly();
        first.onExit().get(30, TimeUnit.SECONDS);
        assertTrue(lvm.volumeGroup(vg).isPresent(), "the next command runs on a new shell");
        List<ProcessHandle> now = shellsOfThisJvm();
        assertEquals(1, now.size());
        assertNotEquals(first.pid(), now.getFirst().pid());
    }

    @Test
    void aCommandStuckOnTheLockIsStoppedAtItsDeadlineWithItsShell() throws Exception {
        lvm.volumeGroup(vg).orElseThrow();
        ProcessHandle before = shellsOfThisJvm().getFirst();
        try (HeldVolumeGroupLock held = HeldVolumeGroupLock.take()) {
            callDeadline = Deadline.after(Duration.ofSeconds(4));
            long started = System.nanoTime();
            try {
                assertThrows(DriverException.class, () -> lvm.logicalVolumes(vg));
            } finally {
                callDeadline = Deadline.NONE;
            }
            long tookMillis = (System.nanoTime() - started) / 1_000_000;
            System.out.println("an lvs on a held lock answered after " + tookMillis + " ms");
            assertFalse(before.isAlive(), "the stuck shell was stopped, not left waiting on the lock");
        }
        assertTrue(lvm.volumeGroup(vg).isPresent(), "a new shell runs once the lock is free");
    }

    @Test
    void closingEndsEveryShellAndRemovesItsConfiguration() throws Exception {
        lvm.volumeGroup(vg).orElseThrow();
        List<ProcessHandle> shells = shellsOfThisJvm();
        assertEquals(1, shells.size());
        try (Stream<Path> made = Files.list(workDir)) {
            Path dir = made.findFirst().orElseThrow();
            assertTrue(Files.readString(dir.resolve("lvmlocal.conf")).contains("report_command_log = 1"));
            assertTrue(Files.isSymbolicLink(dir.resolve("lvm.conf")), "the node's lvm.conf, not a copy");
        }
        lvm.closeShells();
        lvm = null;
        for (ProcessHandle shell : shells) {
            shell.onExit().get(30, TimeUnit.SECONDS);
        }
        try (Stream<Path> left = Files.list(workDir)) {
            assertEquals(List.of(), left.toList(), "the configuration directory is gone");
        }
        String nodeConfig = ok("lvm", "lvmconfig", "--typeconfig", "full", "log/report_command_log");
        assertTrue(nodeConfig.contains("=0"), "the node's own configuration is untouched: " + nodeConfig);
    }
}
