package io.lvmqos.lvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.exec.Command;
import io.lvmqos.exec.CommandResult;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reading lvmconfig's answer, writing the shell's settings, and finding the directories dead drivers
 * left (with the kernel's own file locks, one of them held by another process); the guest's
 * LvmShellCheck uses the real lvm.
 */
class LvmShellConfigTest {

    @TempDir
    Path parent;

    private static final Command LVMCONFIG = Command.of(Path.of("/usr/sbin/lvm"), Duration.ofSeconds(1), "lvmconfig");

    @Test
    void lvmconfigsLinesAreReadByKeyAsPrinted() {
        CommandResult printed = new CommandResult(LVMCONFIG, 0, "backup_dir=\"/etc/lvm/backup\"\n"
                + "archive_dir=\"/etc/lvm/archive\"\nprofile_dir=\"/etc/lvm/profile\"\n", "");
        assertEquals(Map.of("backup/backup_dir", "\"/etc/lvm/backup\"", "backup/archive_dir", "\"/etc/lvm/archive\"",
                        "config/profile_dir", "\"/etc/lvm/profile\""),
                LvmShellConfig.parse(List.of("backup/backup_dir", "backup/archive_dir", "config/profile_dir"), printed));
    }

    @Test
    void aFailedLvmconfigReadsAsNothing() {
        CommandResult failed = new CommandResult(LVMCONFIG, 5, "", "Configuration node log/nosuch not found");
        assertTrue(LvmShellConfig.parse(List.of("log/nosuch"), failed).isEmpty());
    }

    @Test
    void theSettingsPinTheNodesDirectoriesAndAskForTheCommandLog() {
        String text = LvmShellConfig.settings(Map.of("backup/backup_dir", "\"/etc/lvm/backup\"", "backup/archive_dir",
                "\"/etc/lvm/archive\"", "config/profile_dir", "\"/etc/lvm/profile\""));
        assertTrue(text.contains("backup_dir = \"/etc/lvm/backup\""), text);
        assertTrue(text.contains("archive_dir = \"/etc/lvm/archive\""), text);
        assertTrue(text.contains("profile_dir = \"/etc/lvm/profile\""), text);
        assertTrue(text.contains("report_command_log = 1"), text);
        assertTrue(text.contains("command_log_selection = \"all\""), text);
    }

    /** A directory as prepare leaves it: a link to a node file, lvmlocal.conf, the lock file. */
    private Path shellDirectory(String name, boolean withLockFile) throws Exception {
        Path dir = Files.createDirectory(parent.resolve(name));
        Files.createSymbolicLink(dir.resolve("lvm.conf"), nodeFile());
        Files.writeString(dir.resolve("lvmlocal.conf"), "log {\n}\n");
        if (withLockFile) {
            Files.createFile(dir.resolve(LvmShellConfig.IN_USE));
        }
        return dir;
    }

    private Path nodeFile() throws Exception {
        Path node = parent.resolve("node-lvm.conf");
        if (!Files.exists(node)) {
            Files.writeString(node, "devices {\n}\n");
        }
        return node;
    }

    @Test
    void aDirectoryWhoseLockNobodyHoldsIsRemovedAndNotWhatItLinksTo() throws Exception {
        Path dir = shellDirectory("lvm-shell-123", true);
        assertEquals(1, LvmShellConfig.removeAbandoned(parent, LvmShellConfig.UNLOCKED_GRACE));
        assertFalse(Files.exists(dir, LinkOption.NOFOLLOW_LINKS));
        assertEquals("devices {\n}\n", Files.readString(nodeFile()));
    }

    @Test
    void aDirectoryLockedByAnotherProcessStays() throws Exception {
        Path dir = shellDirectory("lvm-shell-456", true);
        Process holder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), LockHolder.class.getName(),
                dir.resolve(LvmShellConfig.IN_USE).toString()).redirectErrorStream(true).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8))) {
            assertEquals("locked", out.readLine());
            assertEquals(0, LvmShellConfig.removeAbandoned(parent, LvmShellConfig.UNLOCKED_GRACE));
            assertTrue(Files.isRegularFile(dir.resolve("lvmlocal.conf")));
            // the holder ends as a killed driver would: the kernel drops its lock
            holder.destroyForcibly();
            assertTrue(holder.waitFor(20, TimeUnit.SECONDS));
            assertEquals(1, LvmShellConfig.removeAbandoned(parent, LvmShellConfig.UNLOCKED_GRACE));
            assertFalse(Files.exists(dir));
        } finally {
            holder.destroyForcibly();
        }
    }

    @Test
    void aDirectoryLockedInThisProcessStays() throws Exception {
        Path dir = shellDirectory("lvm-shell-789", true);
        try (FileChannel channel = FileChannel.open(dir.resolve(LvmShellConfig.IN_USE), StandardOpenOption.WRITE);
             FileLock held = channel.lock()) {
            assertEquals(0, LvmShellConfig.removeAbandoned(parent, LvmShellConfig.UNLOCKED_GRACE));
            assertTrue(Files.isDirectory(dir));
        }
    }

    @Test
    void withoutALockFileOnlyAnOldDirectoryGoes() throws Exception {
        Path young = shellDirectory("lvm-shell-1", false);
        Path old = shellDirectory("lvm-shell-2", false);
        Files.setLastModifiedTime(old, FileTime.from(Instant.now().minus(Duration.ofMinutes(2))));
        assertEquals(1, LvmShellConfig.removeAbandoned(parent, LvmShellConfig.UNLOCKED_GRACE));
        assertTrue(Files.isDirectory(young));
        assertFalse(Files.exists(old));
    }

    @Test
    void onlyTheDriversOwnNamesAreTouched() throws Exception {
        Path other = shellDirectory("lvm-shell-check5", true);
        Path another = shellDirectory("my-lvm-shell-3", true);
        assertEquals(0, LvmShellConfig.removeAbandoned(parent, Duration.ZERO));
        assertTrue(Files.isDirectory(other) && Files.isDirectory(another));
    }

    /** A process that holds the lock on a file until it is killed. */
    public static final class LockHolder {
        public static void main(String[] args) throws Exception {
            try (FileChannel channel = FileChannel.open(Path.of(args[0]), StandardOpenOption.WRITE);
                 FileLock held = channel.lock()) {
                System.out.println("locked");
                System.out.flush();
                Thread.sleep(Duration.ofMinutes(5));
            }
        }
    }
}
