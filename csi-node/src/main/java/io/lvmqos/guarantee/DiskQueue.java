package io.lvmqos.guarantee;

import io.lvmqos.device.DeviceNumber;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One whole disk as sysfs shows it ({@code /sys/dev/block/MAJ:MIN}): its size, its I/O counters,
 * and the two queue settings a calibration turns off while it measures, merging and the I/O
 * scheduler, as the kernel's own model generator does, so that 4 KiB sequential operations are
 * counted as the disk does them and not as the larger requests merging would make of them.
 */
public final class DiskQueue {

    private static final Pattern CHOSEN_SCHEDULER = Pattern.compile("\\[([^\\]]+)\\]");
    /** queue/nomerges: 2 turns every merge off, 0 is the kernel's default. */
    static final String NO_MERGES = "2";

    private final DeviceNumber disk;
    private final Path dir;

    /** @param sys where sysfs is mounted, usually /sys */
    public DiskQueue(Path sys, DeviceNumber disk) {
        this.disk = disk;
        this.dir = sys.resolve("dev/block").resolve(disk.toString());
    }

    public DeviceNumber disk() {
        return disk;
    }

    /** The disk's size in bytes (sysfs counts 512-byte sectors whatever the disk's block size). */
    public long sizeBytes() throws IOException {
        return Long.parseLong(read("size")) * 512;
    }

    /**
     * Operations and bytes the disk has completed since boot, reads and writes apart, and the time
     * it has had I/O in flight (its busy time, which says nothing of how much was in flight).
     */
    public record Counters(long reads, long readBytes, long writes, long writtenBytes, long busyMillis) {

        public Counters minus(Counters earlier) {
            return new Counters(reads - earlier.reads, readBytes - earlier.readBytes, writes - earlier.writes,
                    writtenBytes - earlier.writtenBytes, busyMillis - earlier.busyMillis);
        }
    }

    /** The disk's counters now, from its stat file (Documentation/block/stat.rst: fields 1, 3, 5, 7 and 10). */
    public Counters counters() throws IOException {
        String[] fields = read("stat").strip().split("\\s+");
        return new Counters(Long.parseLong(fields[0]), Long.parseLong(fields[2]) * 512, Long.parseLong(fields[4]),
                Long.parseLong(fields[6]) * 512, Long.parseLong(fields[9]));
    }

    public String merges() throws IOException {
        return read("queue/nomerges");
    }

    public void setMerges(String value) throws IOException {
        write("queue/nomerges", value);
    }

    /** The scheduler in use (the bracketed one); empty when the queue has no choice of scheduler. */
    public Optional<String> scheduler() throws IOException {
        Path file = dir.resolve("queue/scheduler");
        if (!Files.exists(file)) {
            return Optional.empty();
        }
        Matcher chosen = CHOSEN_SCHEDULER.matcher(Files.readString(file, StandardCharsets.US_ASCII));
        return chosen.find() ? Optional.of(chosen.group(1)) : Optional.empty();
    }

    public void setScheduler(String name) throws IOException {
        write("queue/scheduler", name);
    }

    private String read(String name) throws IOException {
        return Files.readString(dir.resolve(name), StandardCharsets.US_ASCII).strip();
    }

    private void write(String name, String value) throws IOException {
        Files.writeString(dir.resolve(name), value, StandardCharsets.US_ASCII);
    }
}
