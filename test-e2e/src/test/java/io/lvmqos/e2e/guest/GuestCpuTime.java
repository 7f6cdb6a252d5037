package io.lvmqos.e2e.guest;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The CPU time of every thread in the guest, from {@code /proc/<pid>/task/<tid>/stat}: two
 * snapshots around a timed phase tell which threads ran meanwhile. The guest has one CPU, so a
 * thread of another process that runs during a call (a compiler thread of the client's JVM, a
 * background lvm) stretches that call by the same time.
 */
final class GuestCpuTime {

    /** USER_HZ: a tick of utime and stime is 10 ms. */
    private static final double MS_PER_TICK = 10.0;

    private final Map<String, Long> ticksByThread;

    private GuestCpuTime(Map<String, Long> ticksByThread) {
        this.ticksByThread = ticksByThread;
    }

    static GuestCpuTime now() {
        Map<String, Long> ticks = new HashMap<>();
        try (Stream<Path> processes = Files.list(Path.of("/proc"))) {
            for (Path process : processes.filter(p -> p.getFileName().toString().matches("\\d+")).toList()) {
                String command = firstWord(read(process.resolve("cmdline")));
                try (Stream<Path> tasks = Files.list(process.resolve("task"))) {
                    for (Path task : tasks.toList()) {
                        String stat = read(task.resolve("stat"));
                        int close = stat.lastIndexOf(')');
                        if (close < 0) {
                            continue;
                        }
                        String thread = stat.substring(stat.indexOf('(') + 1, close);
                        ticks.merge(process.getFileName() + " " + command + " / " + thread, ticks(stat), Long::sum);
                    }
                } catch (IOException | UncheckedIOException ended) {
                    // the process ended between the listing and the read
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new GuestCpuTime(ticks);
    }

    /** utime + stime, in ticks, of a {@code /proc/<pid>/stat} or {@code /proc/<pid>/task/<tid>/stat} line. */
    static long ticks(String stat) {
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        // after "pid (comm) ": utime is field 14 and stime 15
        return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
    }

    /** The threads that used CPU since {@code before}, most first, as "pid command / thread N ms", and the total. */
    String since(GuestCpuTime before, int top) {
        Map<String, Long> used = new HashMap<>();
        ticksByThread.forEach((thread, ticks) -> {
            long delta = ticks - before.ticksByThread.getOrDefault(thread, 0L);
            if (delta > 0) {
                used.put(thread, delta);
            }
        });
        long total = used.values().stream().mapToLong(Long::longValue).sum();
        List<String> most = used.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(top)
                .map(e -> e.getKey() + " " + Math.round(e.getValue() * MS_PER_TICK) + " ms")
                .toList();
        return Math.round(total * MS_PER_TICK) + " ms of CPU in all; most: "
                + most.stream().collect(Collectors.joining("; "));
    }

    private static String read(Path file) {
        try {
            return Files.readString(file).replace('\0', ' ');
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String firstWord(String commandLine) {
        String first = commandLine.strip().split(" ")[0];
        return first.isEmpty() ? "[kernel]" : Path.of(first).getFileName().toString();
    }
}
