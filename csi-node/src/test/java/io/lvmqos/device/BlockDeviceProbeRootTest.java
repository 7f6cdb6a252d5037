package io.lvmqos.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.CommandRunner;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** blkid on real loop devices. Needs root. */
class BlockDeviceProbeRootTest {

    @TempDir
    Path dir;
    LoopDevice loop;
    final CommandRunner runner = new CommandRunner();
    BlockDeviceProbe probe;

    @BeforeEach
    void attach() throws IOException {
        RootRequired.check();
        loop = LoopDevice.create(dir, "probe", 64L << 20);
        probe = BlockDeviceProbe.onThisHost(runner);
    }

    @AfterEach
    void detach() throws IOException {
        if (loop != null) {
            loop.close();
        }
    }

    @Test
    void aZeroedDeviceIsBlank() {
        assertEquals(new DeviceContents.Blank(), probe.probe(loop.path()));
    }

    @Test
    void aFormattedDeviceNamesItsFilesystem() {
        new Filesystems(runner).format(loop.path(), FsType.EXT4);
        assertEquals(new DeviceContents.Filesystem("ext4"), probe.probe(loop.path()));
    }

    @Test
    void aPartitionTableIsNotBlank() throws IOException {
        // A DOS label with one Linux partition, as fdisk would write it.
        ByteBuffer mbr = ByteBuffer.allocate(512).order(ByteOrder.LITTLE_ENDIAN);
        mbr.position(446).put(new byte[] {0, 0, 0, 0, (byte) 0x83, 0, 0, 0}).putInt(2048).putInt(100_000);
        mbr.put(510, (byte) 0x55).put(511, (byte) 0xAA);
        try (RandomAccessFile device = new RandomAccessFile(loop.path().toFile(), "rw")) {
            device.write(mbr.array());
        }
        assertEquals(new DeviceContents.PartitionTable("dos"), probe.probe(loop.path()));
    }

    @Test
    void aMissingDeviceIsAnErrorNotBlank() {
        // blkid -p itself exits 2, "nothing found", for a path it cannot open.
        assertThrows(DriverException.NotFound.class, () -> probe.probe(dir.resolve("no-such-device")));
    }

    @Test
    void aRegularFileIsAnErrorNotBlank() throws IOException {
        Path file = Files.createFile(dir.resolve("zeros"));
        assertThrows(DriverException.FailedPrecondition.class, () -> probe.probe(file));
    }

    @Test
    void theDeviceNumberIsTheOneSysfsReports() throws IOException {
        String sysfs = Files.readString(Path.of("/sys/block", loop.path().getFileName().toString(), "dev")).strip();
        assertEquals(sysfs, DeviceNumber.of(loop.path()).toString());
    }
}
