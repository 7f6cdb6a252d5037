package io.lvmqos.e2e.guest;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The log reader and replayer on logs laid out as dm-log-writes lays them out, built here byte by byte. */
class WriteLogTest {

    private static final int BLOCK = 512;

    @TempDir
    Path dir;

    /** A log being written: the super is filled in by {@link #write}. */
    private static final class LogBuilder {
        private final ByteArrayOutputStream body = new ByteArrayOutputStream();
        private int count;

        LogBuilder entry(long sector, long flags, byte[] data, String mark) {
            ByteBuffer header = ByteBuffer.allocate(BLOCK).order(ByteOrder.LITTLE_ENDIAN);
            byte[] name = mark.getBytes(UTF_8);
            header.putLong(sector).putLong(data.length / BLOCK).putLong(flags).putLong(name.length).put(name);
            body.writeBytes(header.array());
            body.writeBytes(data);
            count++;
            return this;
        }

        LogBuilder discard(long sector, long sectors) {
            ByteBuffer header = ByteBuffer.allocate(BLOCK).order(ByteOrder.LITTLE_ENDIAN);
            header.putLong(sector).putLong(sectors).putLong(WriteLog.DISCARD).putLong(0);
            body.writeBytes(header.array());
            count++;
            return this;
        }

        Path write(Path file, long magic) throws IOException {
            ByteBuffer header = ByteBuffer.allocate(BLOCK).order(ByteOrder.LITTLE_ENDIAN);
            header.putLong(magic).putLong(WriteLog.VERSION).putLong(count).putInt(BLOCK);
            Files.write(file, header.array());
            Files.write(file, body.toByteArray(), StandardOpenOption.APPEND);
            return file;
        }
    }

    private static byte[] filled(int blocks, int value) {
        byte[] data = new byte[blocks * BLOCK];
        Arrays.fill(data, (byte) value);
        return data;
    }

    private Path sampleLog() throws IOException {
        return new LogBuilder()
                .entry(2, 0, filled(2, 0xaa), "")
                .entry(0, WriteLog.FLUSH, new byte[0], "")
                .entry(0, WriteLog.MARK, new byte[0], "d7")
                .entry(3, WriteLog.FUA | WriteLog.METADATA, filled(1, 0xbb), "")
                .discard(2, 1)
                .write(dir.resolve("log"), WriteLog.MAGIC);
    }

    @Test
    void readsEveryEntryWithItsFlagsMarksAndPlace() throws IOException {
        try (WriteLog log = WriteLog.open(sampleLog())) {
            List<WriteLog.Entry> entries = log.entries();
            assertEquals(5, entries.size());
            assertEquals(BLOCK, entries.get(0).offset());
            assertEquals(BLOCK + 3 * BLOCK, entries.get(1).offset(), "the header, then two blocks of data");
            assertEquals(List.of(1, 3), entries.stream().filter(WriteLog.Entry::isFlushPoint)
                    .map(WriteLog.Entry::index).toList(), "the flush and the FUA write");
            assertEquals(Optional.of(2), log.markIndex("d7"));
            assertEquals(Optional.empty(), log.markIndex("d8"));
            assertTrue(entries.get(3).writesBelow(4 * BLOCK, BLOCK));
            assertTrue(!entries.get(3).writesBelow(3 * BLOCK, BLOCK));
        }
    }

    @Test
    void replaysUpToAPointAndOnFromThere() throws IOException {
        Path device = Files.write(dir.resolve("device"), new byte[6 * BLOCK]);
        try (WriteLog log = WriteLog.open(sampleLog());
             FileChannel target = FileChannel.open(device, StandardOpenOption.WRITE)) {
            log.replay(0, 2, target);
            byte[] afterFlush = Files.readAllBytes(device);
            assertArrayEquals(filled(2, 0), Arrays.copyOfRange(afterFlush, 0, 2 * BLOCK));
            assertArrayEquals(filled(2, 0xaa), Arrays.copyOfRange(afterFlush, 2 * BLOCK, 4 * BLOCK));
            log.replay(2, 4, target);
            assertArrayEquals(filled(1, 0xbb), Arrays.copyOfRange(Files.readAllBytes(device), 3 * BLOCK, 4 * BLOCK));
            log.replay(4, 5, target);
            byte[] end = Files.readAllBytes(device);
            assertArrayEquals(filled(1, 0), Arrays.copyOfRange(end, 2 * BLOCK, 3 * BLOCK), "the discard zeroed");
            assertArrayEquals(filled(1, 0xbb), Arrays.copyOfRange(end, 3 * BLOCK, 4 * BLOCK));
            assertEquals(6 * BLOCK, end.length, "nothing written past the device");
        }
    }

    @Test
    void refusesWhatIsNoLog() throws IOException {
        Path notALog = new LogBuilder().write(dir.resolve("other"), 0x1234);
        IOException refused = assertThrows(IOException.class, () -> WriteLog.open(notALog));
        assertTrue(refused.getMessage().contains("no dm-log-writes log"), refused.getMessage());
    }

    @Test
    void refusesALogCutShort() throws IOException {
        Path log = sampleLog();
        byte[] bytes = Files.readAllBytes(log);
        Files.write(log, Arrays.copyOf(bytes, bytes.length - 4 * BLOCK));
        IOException refused = assertThrows(IOException.class, () -> WriteLog.open(log));
        // a header cut short or data past the end: either way the log is refused, naming where it ends
        assertTrue(refused.getMessage().matches(".*(ends at byte|reach byte).*"), refused.getMessage());
    }
}
