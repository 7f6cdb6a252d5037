package io.lvmqos.lvm;

import io.lvmqos.exec.Command;
import io.lvmqos.exec.CommandResult;
import io.lvmqos.exec.CommandRunner;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The configuration directory of the driver's lvm shells: the node's own, with command-log
 * reporting added. lvm refuses {@code log/report_command_log} on a command's {@code --config}, and
 * {@code lvm --config ...} with no command does not start the shell, so the setting must come from
 * a file, and the only place lvm reads files from is {@code LVM_SYSTEM_DIR}. The directory made
 * here holds a symbolic link to every entry of the node's directory ({@code lvm.conf}, the devices
 * file, profiles, backups) except {@code lvmlocal.conf}, which is the node's own text followed by
 * the settings the shell needs. lvm reads lvmlocal.conf over lvm.conf, and resolves its default
 * backup, archive and profile directories below {@code LVM_SYSTEM_DIR}, so those three are pinned
 * to the node's effective values, read from lvm itself before the directory is used.
 *
 * <p>The result is checked with {@code lvmconfig} against the new directory; a node whose
 * configuration does not let the settings through (a value that overrides them) gets no shell, and
 * the driver forks lvm per command as before.
 *
 * <p>A driver holds a lock on its directory's {@value #IN_USE} file for as long as it runs; the
 * kernel drops it when the process ends, however it ends. A driver that was killed leaves its
 * directory behind, and in the DaemonSet that is a 1 MiB memory emptyDir which outlives container
 * restarts, so each start first removes the directories whose lock nobody holds.
 */
final class LvmShellConfig {

    private static final Duration LVMCONFIG_TIMEOUT = Duration.ofSeconds(30);
    private static final List<String> PINNED = List.of("backup/backup_dir", "backup/archive_dir", "config/profile_dir");
    /** What the shell needs, as lvmconfig prints it. */
    static final Map<String, String> NEEDED = Map.of(
            "log/report_command_log", "1",
            "log/command_log_selection", "\"all\"",
            "report/output_format", "\"json\"");

    static final String IN_USE = "in-use";
    /** What {@link #prepare} names its directories, and all that {@link #removeAbandoned} ever removes. */
    private static final Pattern DIRECTORY_NAME = Pattern.compile("lvm-shell-[0-9]+");
    /**
     * A directory without its lock file this long is left from an older driver, or from a start that
     * died before it took the lock; younger ones may be a start between the two steps.
     */
    static final Duration UNLOCKED_GRACE = Duration.ofMinutes(1);

    private LvmShellConfig() {
    }

    /** A shell directory and the lock that marks it in use; {@link #remove} lets both go. */
    record Directory(Path path, FileChannel inUse) {

        /** Removes the directory: its links and files, never what the links point to. */
        void remove() {
            try {
                inUse.close();
            } catch (IOException e) {
                // closing a lock file cannot lose anything; the directory goes below regardless
            }
            removeEntries(path);
        }
    }

    /** The node's lvm configuration directory as the runner's lvm sees it. */
    static Path nodeSystemDir(CommandRunner runner) {
        return runner.environmentValue("LVM_SYSTEM_DIR").filter(v -> !v.isBlank()).map(Path::of)
                .orElse(Path.of("/etc/lvm"));
    }

    /** Why the node's lvm gets no shell: its configuration could not be read or does not take the settings. */
    static final class Refused extends Exception {
        Refused(String why) {
            super(why);
        }
    }

    /** Makes the shell's directory below {@code parent}, after removing those that dead drivers left there. */
    static Directory prepare(CommandRunner runner, Path lvm, Path parent) throws IOException, Refused {
        Path node = nodeSystemDir(runner);
        Map<String, String> pinned = values(runner, lvm, PINNED);
        if (!pinned.keySet().containsAll(PINNED)) {
            throw new Refused("lvmconfig did not print " + PINNED + " for the node's configuration in " + node);
        }
        Files.createDirectories(parent);
        removeAbandoned(parent, UNLOCKED_GRACE);
        Path dir = Files.createTempDirectory(parent, "lvm-shell-",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        FileChannel inUse = FileChannel.open(dir.resolve(IN_USE), StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE);
        inUse.lock();
        try {
            link(node, dir, pinned);
            check(runner, lvm, dir, pinned);
        } catch (IOException | Refused | RuntimeException e) {
            new Directory(dir, inUse).remove();
            throw e;
        }
        return new Directory(dir, inUse);
    }

    private static void link(Path node, Path dir, Map<String, String> pinned) throws IOException {
        try (Stream<Path> entries = Files.list(node)) {
            for (Path entry : entries.toList()) {
                if (!entry.getFileName().toString().equals("lvmlocal.conf")) {
                    Files.createSymbolicLink(dir.resolve(entry.getFileName()), entry.toAbsolutePath());
                }
            }
        }
        Path nodeLocal = node.resolve("lvmlocal.conf");
        String local = Files.isRegularFile(nodeLocal) ? Files.readString(nodeLocal) + "\n" : "";
        Files.writeString(dir.resolve("lvmlocal.conf"), local + settings(pinned));
    }

    private static void check(CommandRunner runner, Path lvm, Path dir, Map<String, String> pinned) throws Refused {
        List<String> check = new ArrayList<>(NEEDED.keySet());
        check.addAll(PINNED);
        Map<String, String> effective = values(runner.withEnvironment(Map.of("LVM_SYSTEM_DIR", dir.toString())), lvm,
                check);
        Map<String, String> expected = new LinkedHashMap<>(NEEDED);
        // the pinned paths resolve as they did for the node: nothing moved into the shell's directory
        expected.putAll(pinned);
        if (!expected.equals(effective)) {
            throw new Refused("with the settings added to " + dir.resolve("lvmlocal.conf") + " lvmconfig printed "
                    + effective + ", not " + expected);
        }
    }

    /**
     * Removes the shell directories below {@code parent} that no running driver holds: those whose
     * {@value #IN_USE} lock can be taken, and those without one older than {@code unlockedGrace}.
     * Returns how many it removed.
     */
    static int removeAbandoned(Path parent, Duration unlockedGrace) throws IOException {
        int removed = 0;
        List<Path> dirs;
        try (Stream<Path> entries = Files.list(parent)) {
            dirs = entries.filter(p -> DIRECTORY_NAME.matcher(p.getFileName().toString()).matches())
                    .filter(p -> Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)).toList();
        }
        for (Path dir : dirs) {
            if (abandoned(dir, unlockedGrace)) {
                removeEntries(dir);
                removed++;
            }
        }
        return removed;
    }

    private static boolean abandoned(Path dir, Duration unlockedGrace) throws IOException {
        Path lockFile = dir.resolve(IN_USE);
        try {
            if (!Files.isRegularFile(lockFile, LinkOption.NOFOLLOW_LINKS)) {
                FileTime modified = Files.getLastModifiedTime(dir, LinkOption.NOFOLLOW_LINKS);
                return modified.toInstant().plus(unlockedGrace).isBefore(Instant.now());
            }
            try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.WRITE)) {
                // the lock goes again when this returns: nobody takes an abandoned directory back
                return channel.tryLock() != null;
            }
        } catch (OverlappingFileLockException heldHere) {
            return false; // another driver in this JVM (the tests run several)
        } catch (NoSuchFileException goneMeanwhile) {
            return false; // another driver's start removed it between the listing and this look
        }
    }

    /** The text appended to the node's lvmlocal.conf, in lvm's configuration syntax. */
    static String settings(Map<String, String> pinned) {
        return "# Added by lvmqos for its lvm shells: each command's log as a JSON report.\n"
                + "backup {\n    backup_dir = " + pinned.get("backup/backup_dir") + "\n    archive_dir = "
                + pinned.get("backup/archive_dir") + "\n}\n"
                + "config {\n    profile_dir = " + pinned.get("config/profile_dir") + "\n}\n"
                + "log {\n    report_command_log = 1\n    command_log_selection = \"all\"\n}\n"
                + "report {\n    output_format = \"json\"\n}\n";
    }

    /** {@code lvmconfig} of the given keys, as {@code key -> value} with the value as lvm prints it. */
    private static Map<String, String> values(CommandRunner runner, Path lvm, List<String> keys) {
        List<String> args = new ArrayList<>(List.of("lvmconfig", "--typeconfig", "full"));
        args.addAll(keys);
        CommandResult result = runner.run(Command.of(lvm, LVMCONFIG_TIMEOUT, args));
        return parse(keys, result);
    }

    static Map<String, String> parse(List<String> keys, CommandResult result) {
        Map<String, String> values = new LinkedHashMap<>();
        if (!result.succeeded()) {
            return values;
        }
        List<String> lines = result.stdout().lines().map(String::strip).filter(l -> !l.isEmpty()).toList();
        for (String key : keys) {
            String name = key.substring(key.indexOf('/') + 1);
            lines.stream().filter(l -> l.startsWith(name + "=")).findFirst()
                    .ifPresent(l -> values.put(key, l.substring(name.length() + 1)));
        }
        return values;
    }

    private static void removeEntries(Path dir) {
        try (Stream<Path> entries = Files.list(dir)) {
            for (Path entry : entries.toList()) {
                Files.deleteIfExists(entry); // a symbolic link is deleted itself, not followed
            }
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            // a few links and small files in the driver's own emptyDir; the next start tries again
        }
    }
}
