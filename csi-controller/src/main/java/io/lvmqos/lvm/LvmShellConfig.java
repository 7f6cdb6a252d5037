package io.lvmqos.lvm;

import io.lvmqos.exec.Command;
import io.lvmqos.exec.CommandResult;
import io.lvmqos.exec.CommandRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
 */
final class LvmShellConfig {

    private static final Duration LVMCONFIG_TIMEOUT = Duration.ofSeconds(30);
    private static final List<String> PINNED = List.of("backup/backup_dir", "backup/archive_dir", "config/profile_dir");
    /** What the shell needs, as lvmconfig prints it. */
    static final Map<String, String> NEEDED = Map.of(
            "log/report_command_log", "1",
            "log/command_log_selection", "\"all\"",
            "report/output_format", "\"json\"");

    private LvmShellConfig() {
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

    /** Makes the shell's directory below {@code parent}. */
    static Path prepare(CommandRunner runner, Path lvm, Path parent) throws IOException, Refused {
        Path node = nodeSystemDir(runner);
        Map<String, String> pinned = values(runner, lvm, PINNED);
        if (!pinned.keySet().containsAll(PINNED)) {
            throw new Refused("lvmconfig did not print " + PINNED + " for the node's configuration in " + node);
        }
        Files.createDirectories(parent);
        Path dir = Files.createTempDirectory(parent, "lvm-shell-",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
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
        return dir;
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

    /** Removes a directory {@link #prepare} made: its links and lvmlocal.conf, never what the links point to. */
    static void remove(Path dir) {
        try (Stream<Path> entries = Files.list(dir)) {
            for (Path entry : entries.toList()) {
                Files.deleteIfExists(entry); // a symbolic link is deleted itself, not followed
            }
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            // a few links and one small file in the driver's own emptyDir, gone with the pod
        }
    }
}
