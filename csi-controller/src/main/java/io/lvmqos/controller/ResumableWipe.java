package io.lvmqos.controller;

import io.lvmqos.errors.DriverException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Zeroes a linear LV from where an earlier attempt stopped, in pieces, at most at a given rate, and
 * within the time the caller has. Its progress is saved (in an LV tag, by the caller's
 * {@link Progress}) every few seconds and whenever it stops, so that neither a retry nor a restart
 * starts over: a 1 TiB LV on a 200 MB/s disk takes about 90 minutes, far past any one RPC.
 *
 * <p>Zeroing a range twice is harmless, so a crash between a piece and its save costs at most
 * {@code saveEvery} of work again. The rate is an average over the whole call: each piece is
 * written as fast as the disk takes it, then the wipe waits until the average is back at the rate.
 */
public final class ResumableWipe {

    /** Zeroes {@code length} bytes of the device from {@code offset}. */
    @FunctionalInterface
    public interface Zeroer {
        void zero(Path device, long offset, long length);
    }

    /** Where the wiped length is kept between calls. */
    @FunctionalInterface
    public interface Progress {
        void save(long wipedBytes);
    }

    /** Time, as a seam for tests: a monotonic clock and a sleep. */
    public interface Clock {
        long nanoTime();

        void sleep(Duration duration) throws InterruptedException;

        Clock SYSTEM = new Clock() {
            @Override
            public long nanoTime() {
                return System.nanoTime();
            }

            @Override
            public void sleep(Duration duration) throws InterruptedException {
                Thread.sleep(duration);
            }
        };
    }

    /** Pieces are whole MiB, so every offset and length is aligned to any sector size. */
    static final long MIB = 1L << 20;
    /** The largest piece: one blkdiscard of about a second on a fast disk. */
    static final long MAX_PIECE = 256 * MIB;
    /** How often progress is saved while wiping. */
    static final Duration SAVE_EVERY = Duration.ofSeconds(10);
    /** Time kept back from the caller's deadline for the last save and the answer. */
    static final Duration RESERVE = Duration.ofSeconds(5);

    private final Zeroer zeroer;
    private final Clock clock;
    private final OptionalLong bytesPerSecond;

    /** @param bytesPerSecond the most the wipe may write per second on average; empty for no limit */
    public ResumableWipe(Zeroer zeroer, Clock clock, OptionalLong bytesPerSecond) {
        bytesPerSecond.ifPresent(rate -> {
            if (rate < MIB) {
                throw new IllegalArgumentException("a wipe rate below 1 MiB/s is not useful: " + rate);
            }
        });
        this.zeroer = zeroer;
        this.clock = clock;
        this.bytesPerSecond = bytesPerSecond;
    }

    /**
     * Zeroes {@code device} from {@code alreadyWiped} to {@code size}, saving progress on the way.
     *
     * @param timeLeft how long the caller can wait; empty when it has no deadline
     * @throws DriverException.Aborted when the time runs out first, after saving how far it got
     */
    public void run(Path device, long size, long alreadyWiped, Progress progress, Optional<Duration> timeLeft) {
        long started = clock.nanoTime();
        long endBy = timeLeft.map(left -> started + left.minus(RESERVE).toNanos()).orElse(Long.MAX_VALUE);
        long wiped = Math.min(alreadyWiped, size);
        long writtenNow = 0;
        long lastSave = started;
        long piece = pieceSize();
        try {
            while (wiped < size) {
                if (clock.nanoTime() + expectedNanos(piece) > endBy) {
                    progress.save(wiped);
                    throw DriverException.aborted("zeroing " + device + " before it is deleted: " + wiped + " of "
                            + size + " bytes done" + bytesPerSecond.stream().mapToObj(rate -> " at " + rate + " bytes/s")
                            .findFirst().orElse("") + "; the next DeleteVolume goes on from there");
                }
                long length = Math.min(piece, size - wiped);
                zeroer.zero(device, wiped, length);
                wiped += length;
                writtenNow += length;
                pace(started, writtenNow);
                if (clock.nanoTime() - lastSave >= SAVE_EVERY.toNanos() && wiped < size) {
                    progress.save(wiped);
                    lastSave = clock.nanoTime();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            progress.save(wiped);
            throw DriverException.aborted("zeroing " + device + " was interrupted at " + wiped + " of " + size + " bytes");
        }
    }

    private long pieceSize() {
        // about a second of writing at the rate, so that pacing is smooth
        return bytesPerSecond.stream().map(rate -> Math.max(MIB, Math.min(MAX_PIECE, rate / MIB * MIB)))
                .findFirst().orElse(MAX_PIECE);
    }

    /** How long a piece takes at the rate; without one, the disk's speed is unknown and nothing is assumed. */
    private long expectedNanos(long piece) {
        return bytesPerSecond.stream().map(rate -> (long) (piece * 1e9 / rate)).findFirst().orElse(0L);
    }

    private void pace(long started, long written) throws InterruptedException {
        if (bytesPerSecond.isEmpty()) {
            return;
        }
        // in double: bytes times nanoseconds overflows a long past 9 GiB
        long due = started + (long) (written * 1e9 / bytesPerSecond.getAsLong());
        long early = due - clock.nanoTime();
        if (early > 0) {
            clock.sleep(Duration.ofNanos(early));
        }
    }
}
