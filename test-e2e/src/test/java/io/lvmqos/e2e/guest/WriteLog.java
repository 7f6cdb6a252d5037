package io.lvmqos.e2e.guest;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A write log as the kernel's dm-log-writes target leaves it on its log device, read back and
 * replayed onto another device (this is our own reader; the layout is the kernel's, from
 * drivers/md/dm-log-writes.c). The target logs a write once it is on the disk's stable side:
 * completed writes wait for the next flush and are logged before it, FUA writes at once, so
 * replaying entries 0..i onto a zeroed device of the same size gives exactly what a power cut just
 * after entry i could have left, whenever entry i is a flush or FUA.
 *
 * <p>Layout, all little-endian, in units of the logged device's logical block ({@code sectorsize}):
 * block 0 holds the super ({@code u64 magic, u64 version, u64 nr_entries, u32 sectorsize}); then for
 * each entry one block holding its header ({@code u64 sector, u64 nr_sectors, u64 flags, u64 data_len})
 * with a mark's name right after the header, followed by {@code nr_sectors} blocks of the data written,
 * except for a discard, which has no data in the log.
 */
final class WriteLog implements AutoCloseable {
    static final long MAGIC = 0x6a736677736872L;
    static final long VERSION = 1;
    static final long FLUSH = 1;
    static final long FUA = 1 << 1;
    static final long DISCARD = 1 << 2;
    static final long MARK = 1 << 3;
    static final long METADATA = 1 << 4;
    private static final int HEADER_BYTES = 32;
    private static final int SUPER_BYTES = 28;
    private static final int CHUNK = 1 << 20;

    /**
     * One logged write, flush, discard or mark, as the log holds it.
     *
     * @param index its place in the log, from 0
     * @param offset the byte offset of its header block in the log
     * @param sector the first block written, in the logged device's blocks
     * @param sectors how many blocks it wrote (or discarded)
     */
    record Entry(int index, long offset, long sector, long sectors, long flags, Optional<String> mark) {
        boolean isFlushPoint() {
            return (flags & (FLUSH | FUA)) != 0;
        }

        boolean isDiscard() {
            return (flags & DISCARD) != 0;
        }

        /** Whether it changed bytes below {@code limitBytes} of the logged device. */
        boolean writesBelow(long limitBytes, int blockSize) {
            return sectors > 0 && sector * blockSize < limitBytes;
        }
    }

    private final FileChannel log;
    private final int blockSize;
    private final List<Entry> entries;

    private WriteLog(FileChannel log, int blockSize, List<Entry> entries) {
        this.log = log;
        this.blockSize = blockSize;
        this.entries = List.copyOf(entries);
    }

    /** Reads the super and every entry's header; the data stays on the log device until replayed. */
    static WriteLog open(Path device) throws IOException {
        FileChannel log = FileChannel.open(device, StandardOpenOption.READ);
        try {
            ByteBuffer superBlock = read(log, 0, SUPER_BYTES);
            long magic = superBlock.getLong();
            long version = superBlock.getLong();
            long count = superBlock.getLong();
            int blockSize = superBlock.getInt();
            if (magic != MAGIC || version != VERSION) {
                throw new IOException(device + " holds no dm-log-writes log: magic " + Long.toHexString(magic)
                        + ", version " + version);
            }
            if (blockSize < 512 || Integer.bitCount(blockSize) != 1 || count > Integer.MAX_VALUE) {
                throw new IOException(device + ": implausible log super: block size " + blockSize + ", " + count
                        + " entries");
            }
            List<Entry> entries = new ArrayList<>();
            long offset = blockSize;
            for (int i = 0; i < count; i++) {
                ByteBuffer header = read(log, offset, blockSize);
                long sector = header.getLong();
                long sectors = header.getLong();
                long flags = header.getLong();
                long dataLength = header.getLong();
                Optional<String> mark = Optional.empty();
                if ((flags & MARK) != 0) {
                    if (dataLength > blockSize - HEADER_BYTES) {
                        throw new IOException("entry " + i + ": a mark of " + dataLength + " bytes");
                    }
                    byte[] name = new byte[(int) dataLength];
                    header.get(name);
                    mark = Optional.of(new String(name, UTF_8));
                } else if (dataLength != 0) {
                    // the kernel writes private data only for marks: anything else is not a layout we know
                    throw new IOException("entry " + i + " at byte " + offset + ": " + dataLength
                            + " bytes of inline data on an entry with flags " + flags);
                }
                Entry entry = new Entry(i, offset, sector, sectors, flags, mark);
                entries.add(entry);
                offset += blockSize + (entry.isDiscard() ? 0 : sectors * blockSize);
            }
            if (offset > log.size()) {
                throw new IOException(device + ": " + count + " entries reach byte " + offset + " of a "
                        + log.size() + "-byte log");
            }
            return new WriteLog(log, blockSize, entries);
        } catch (IOException | RuntimeException e) {
            log.close();
            throw e;
        }
    }

    List<Entry> entries() {
        return entries;
    }

    int blockSize() {
        return blockSize;
    }

    /** The index of the mark of this name. */
    Optional<Integer> markIndex(String name) {
        return entries.stream().filter(e -> e.mark().equals(Optional.of(name))).map(Entry::index).findFirst();
    }

    /**
     * Writes entries {@code from} (inclusive) to {@code to} (exclusive) onto {@code target}, in log
     * order: a write's data where it was written, a discard as zeros (what a discarded range reads
     * back as is undefined; zeros are one thing it may be), flushes and marks as nothing.
     */
    void replay(int from, int to, FileChannel target) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocateDirect(CHUNK);
        for (Entry entry : entries.subList(from, to)) {
            long length = entry.sectors() * blockSize;
            long at = entry.sector() * blockSize;
            long source = entry.offset() + blockSize;
            for (long done = 0; done < length; ) {
                int n = (int) Math.min(CHUNK, length - done);
                buffer.clear().limit(n);
                if (entry.isDiscard()) {
                    buffer.put(new byte[n]).flip();
                } else {
                    readFully(log, source + done, buffer);
                    buffer.flip();
                }
                while (buffer.hasRemaining()) {
                    done += target.write(buffer, at + done);
                }
            }
        }
    }

    @Override
    public void close() throws IOException {
        log.close();
    }

    private static ByteBuffer read(FileChannel channel, long position, int length) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(length);
        readFully(channel, position, buffer);
        return buffer.flip().order(ByteOrder.LITTLE_ENDIAN);
    }

    private static void readFully(FileChannel channel, long position, ByteBuffer buffer) throws IOException {
        long at = position;
        while (buffer.hasRemaining()) {
            int n = channel.read(buffer, at);
            if (n < 0) {
                throw new IOException("the log ends at byte " + at + ", inside an entry");
            }
            at += n;
        }
    }
}
