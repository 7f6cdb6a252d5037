package io.lvmqos.e2e.guest;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * The lvm processes a driver runs, seen from outside as a test sees them: forks named by their verb
 * ({@code lvm lvcreate ...}) and long-lived shells ({@code lvm} with no arguments), which run one
 * command at a time. A shell is inside a command on a group while it has the group's lock file open
 * (lvm opens it before it waits for the lock and closes it after the command), so "the call's lvm
 * runs" reads the same for both.
 */
final class DriverLvmProcesses {

    private static final Path LOCK_DIR = Path.of("/run/lock/lvm");

    private DriverLvmProcesses() {
    }

    /** Every lvm below the plugin, idle shells included. */
    static List<ProcessHandle> all(ProcessHandle plugin) {
        try (Stream<ProcessHandle> children = plugin.descendants()) {
            return children.filter(DriverLvmProcesses::isLvm).toList();
        }
    }

    /**
     * The lvm processes running a command of a call on {@code volumeGroup}: forks whose verb is not
     * the health check's {@code vgs}, and shells that hold the group's lock file open.
     */
    static List<ProcessHandle> inCommand(ProcessHandle plugin, String volumeGroup) {
        return all(plugin).stream().filter(p -> isShell(p) ? holdsLockFile(p, volumeGroup)
                : p.info().arguments().filter(a -> !a[0].equals("vgs")).isPresent()).toList();
    }

    /** Whether the plugin runs {@code verb} now: forked, or in a shell inside a command on the group. */
    static boolean runs(ProcessHandle plugin, String verb, String volumeGroup) {
        return all(plugin).stream().anyMatch(p -> isShell(p) ? holdsLockFile(p, volumeGroup)
                : p.info().arguments().filter(a -> a[0].equals(verb)).isPresent());
    }

    static boolean isShell(ProcessHandle process) {
        return process.info().arguments().map(a -> a.length == 0).orElse(true);
    }

    private static boolean isLvm(ProcessHandle process) {
        return process.info().command().filter(c -> c.endsWith("/lvm")).isPresent();
    }

    private static boolean holdsLockFile(ProcessHandle process, String volumeGroup) {
        Path lock = LOCK_DIR.resolve("V_" + volumeGroup);
        try (Stream<Path> fds = Files.list(Path.of("/proc", Long.toString(process.pid()), "fd"))) {
            return fds.anyMatch(fd -> {
                try {
                    return Files.readSymbolicLink(fd).equals(lock);
                } catch (IOException e) {
                    return false; // closed while we looked
                }
            });
        } catch (IOException e) {
            return false; // the process ended
        }
    }
}
