package io.lvmqos.guarantee;

import com.sun.nio.file.ExtendedOpenOption;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Direct I/O against a block device for a fixed time, the way a model generator drives a disk: a
 * given block size, sequential or random offsets, and a queue depth kept by that many threads each
 * with one blocking operation in flight (the page cache is bypassed, so every operation reaches the
 * device). Buffers are native memory aligned to 4 KiB, outside the Java heap and the direct-buffer
 * budget of the plugin's JVM options.
 */
public final class DirectIoBench {

    /** What direct I/O needs of offsets, lengths and buffer addresses on every disk Linux supports. */
    static final int ALIGNMENT = 4096;

    public enum Direction { READ, WRITE }

    /**
     * One kind of I/O.
     *
     * @param key the model's figure it measures, such as rrandiops
     * @param blockBytes the size of each operation, a multiple of {@value #ALIGNMENT}
     * @param depth how many operations are in flight at once
     */
    public record Workload(String key, Direction direction, boolean random, int blockBytes, int depth) {

        public Workload {
            if (blockBytes <= 0 || blockBytes % ALIGNMENT != 0 || depth <= 0) {
                throw new IllegalArgumentException("block " + blockBytes + " and depth " + depth + " are not usable");
            }
        }

        public String describe() {
            String size = blockBytes >= 1 << 20 ? (blockBytes >> 20) + " MiB" : (blockBytes >> 10) + " KiB";
            return size + (random ? " random " : " sequential ") + (direction == Direction.READ ? "reads" : "writes")
                    + ", " + depth + " in flight";
        }
    }

    /**
     * What a workload did: operations completed in the time it ran, and of those the ones that
     * completed in its second half, so that a disk whose rate fell while it ran (a burst allowance
     * spent) shows it.
     */
    public record Result(long operations, int blockBytes, Duration elapsed, long lateOperations, Duration lateElapsed) {

        public long bytes() {
            return operations * blockBytes;
        }

        public double iops() {
            return operations / seconds(elapsed);
        }

        public double bps() {
            return bytes() / seconds(elapsed);
        }

        /** Operations per second in the second half of the run. */
        public double lateIops() {
            return lateOperations / seconds(lateElapsed);
        }

        /** Operations per second in the first half of the run. */
        public double earlyIops() {
            return (operations - lateOperations) / seconds(elapsed.minus(lateElapsed));
        }

        /** The result of the second half alone. */
        public Result late() {
            return new Result(lateOperations, blockBytes, lateElapsed, lateOperations, lateElapsed);
        }

        private static double seconds(Duration duration) {
            return Math.max(1e-9, duration.toNanos() / 1e9);
        }
    }

    /**
     * Runs the workload over the first {@code lengthBytes} of the device for {@code duration}; an
     * operation in flight when the time is up completes and counts.
     */
    public Result run(Path device, long lengthBytes, Workload workload, Duration duration) throws IOException {
        long blocks = lengthBytes / workload.blockBytes();
        if (blocks < 1) {
            throw new IllegalArgumentException(device + ": " + lengthBytes + " bytes hold no " + workload.describe());
        }
        long span = blocks * workload.blockBytes();
        try (FileChannel channel = open(device, workload.direction())) {
            AtomicLong operations = new AtomicLong();
            // counted by the workers as each operation completes: a main thread sampling at the half
            // can wake late on a busy CPU (a one-CPU guest woke after the end, and the half read as 0)
            AtomicLong lateOperations = new AtomicLong();
            AtomicLong nextSequential = new AtomicLong();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            long start = System.nanoTime();
            long deadline = start + duration.toNanos();
            long half = start + duration.toNanos() / 2;
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < workload.depth(); i++) {
                threads.add(Thread.ofPlatform().name("calibrate-" + workload.key() + "-" + i).start(() -> {
                    try (Arena arena = Arena.ofConfined()) {
                        ByteBuffer buffer = buffer(arena, workload.blockBytes());
                        while (System.nanoTime() < deadline && failure.get() == null) {
                            long offset = workload.random() ? ThreadLocalRandom.current().nextLong(blocks) * workload.blockBytes()
                                    : nextSequential.getAndAdd(workload.blockBytes()) % span;
                            transfer(channel, buffer, offset, workload.direction());
                            operations.incrementAndGet();
                            if (System.nanoTime() >= half) {
                                lateOperations.incrementAndGet();
                            }
                        }
                    } catch (IOException | RuntimeException e) {
                        failure.compareAndSet(null, e);
                    }
                }));
            }
            joinAll(threads);
            long end = System.nanoTime();
            Duration elapsed = Duration.ofNanos(end - start);
            if (failure.get() != null) {
                throw new IOException(workload.describe() + " on " + device + " failed: " + failure.get().getMessage(),
                        failure.get());
            }
            return new Result(operations.get(), workload.blockBytes(), elapsed, lateOperations.get(),
                    Duration.ofNanos(end - half));
        }
    }

    /**
     * Writes the first {@code lengthBytes} once, in order: a thin volume's blocks are provisioned
     * by its pool on their first write, and a measurement of unprovisioned blocks would time the
     * pool, or for reads nothing at all (the pool answers zeros without reading the disk).
     */
    public void fill(Path device, long lengthBytes, int blockBytes) throws IOException {
        try (FileChannel channel = open(device, Direction.WRITE); Arena arena = Arena.ofConfined()) {
            ByteBuffer buffer = buffer(arena, blockBytes);
            for (long offset = 0; offset + blockBytes <= lengthBytes; offset += blockBytes) {
                transfer(channel, buffer, offset, Direction.WRITE);
            }
        }
    }

    private static FileChannel open(Path device, Direction direction) throws IOException {
        return direction == Direction.READ
                ? FileChannel.open(device, StandardOpenOption.READ, ExtendedOpenOption.DIRECT)
                : FileChannel.open(device, StandardOpenOption.WRITE, ExtendedOpenOption.DIRECT);
    }

    /** Random bytes: a disk that compresses or deduplicates would make little of zeros. */
    private static ByteBuffer buffer(Arena arena, int bytes) {
        ByteBuffer buffer = arena.allocate(bytes, ALIGNMENT).asByteBuffer();
        byte[] chunk = new byte[ALIGNMENT];
        while (buffer.hasRemaining()) {
            ThreadLocalRandom.current().nextBytes(chunk);
            buffer.put(chunk, 0, Math.min(chunk.length, buffer.remaining()));
        }
        return buffer.clear();
    }

    private static void transfer(FileChannel channel, ByteBuffer buffer, long offset, Direction direction)
            throws IOException {
        buffer.clear();
        long position = offset;
        while (buffer.hasRemaining()) {
            int done = direction == Direction.READ ? channel.read(buffer, position) : channel.write(buffer, position);
            if (done <= 0) {
                throw new IOException("the device ended at " + position + " bytes");
            }
            position += done;
        }
    }

    private static void joinAll(List<Thread> threads) throws IOException {
        try {
            for (Thread thread : threads) {
                thread.join();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while measuring", e);
        }
    }
}
