package io.lvmqos.mount;

import io.lvmqos.device.DeviceNumber;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * Finds the processes that keep a filesystem busy, for the message of a failed unmount.
 *
 * <p>Matches by device number, not by path: /proc/PID/fd links read as paths inside the process's
 * own mount namespace (a pod's container sees /data, not the kubelet path), but following them
 * with stat lands on the file itself, whose st_dev is the filesystem's. All bind mounts of one
 * filesystem share that number, so a holder may be using another mount of the same volume; the
 * message says so. The scan is bounded in processes, descriptors, time and results, because it
 * runs inside an RPC.
 */
final class ProcessScanner {

    record Holder(long pid, String command, List<String> uses) {
        @Override
        public String toString() {
            return "pid " + pid + " (" + command + ") " + String.join(" ", uses);
        }
    }

    record Holders(List<Holder> processes, boolean complete) {
    }

    private static final int MAX_PROCESSES = 20_000;
    private static final int MAX_DESCRIPTORS = 200_000;
    private static final int MAX_HOLDERS = 10;
    private static final long BUDGET_NANOS = 2_000_000_000L;

    private final Path proc;

    ProcessScanner(Path proc) {
        this.proc = proc;
    }

    Holders using(DeviceNumber device) {
        long deadline = System.nanoTime() + BUDGET_NANOS;
        List<Holder> found = new ArrayList<>();
        int processes = 0;
        int descriptors = 0;
        boolean complete = true;
        try (DirectoryStream<Path> pids = Files.newDirectoryStream(proc, p -> isPid(p.getFileName().toString()))) {
            for (Path pidDir : pids) {
                if (++processes > MAX_PROCESSES || found.size() >= MAX_HOLDERS || System.nanoTime() > deadline) {
                    complete = false;
                    break;
                }
                TreeSet<String> uses = new TreeSet<>();
                if (on(pidDir.resolve("cwd"), device)) {
                    uses.add("cwd");
                }
                if (on(pidDir.resolve("root"), device)) {
                    uses.add("root");
                }
                try (DirectoryStream<Path> fds = Files.newDirectoryStream(pidDir.resolve("fd"))) {
                    for (Path fd : fds) {
                        if (++descriptors > MAX_DESCRIPTORS) {
                            complete = false;
                            break;
                        }
                        if (on(fd, device)) {
                            uses.add("fd " + fd.getFileName() + " -> " + target(fd));
                            if (uses.size() > 3) {
                                break;
                            }
                        }
                    }
                } catch (IOException | SecurityException e) {
                    // The process exited, or we may not look: not a holder we can name.
                }
                if (!uses.isEmpty()) {
                    long pid = Long.parseLong(pidDir.getFileName().toString());
                    found.add(new Holder(pid, command(pidDir), List.copyOf(uses)));
                }
            }
        } catch (IOException e) {
            complete = false;
        }
        return new Holders(List.copyOf(found), complete);
    }

    private static boolean on(Path link, DeviceNumber device) {
        try {
            long dev = (Long) Files.getAttribute(link, "unix:dev");
            return DeviceNumber.fromDev(dev).equals(device);
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private static String target(Path link) {
        try {
            return Files.readSymbolicLink(link).toString();
        } catch (IOException e) {
            return "?";
        }
    }

    private static String command(Path pidDir) {
        try {
            return Files.readString(pidDir.resolve("comm"), StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            return "?";
        }
    }

    private static boolean isPid(String name) {
        if (name.isEmpty()) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            if (!Character.isDigit(name.charAt(i))) {
                return false;
            }
        }
        return true;
    }
}
