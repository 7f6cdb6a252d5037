package io.lvmqos.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.lvmqos.errors.DriverException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The disks under an LV, from a sysfs laid out as the kernel lays it out for a thin LV on a partition and a disk. */
class BackingDisksTest {

    @TempDir
    Path sys;

    /** A block device directory under devices/, with its dev file and its /sys/dev/block link. */
    private Path device(String path, String number) throws IOException {
        Path dir = Files.createDirectories(sys.resolve("devices").resolve(path));
        Files.writeString(dir.resolve("dev"), number + "\n");
        Files.createDirectories(sys.resolve("dev/block"));
        Files.createSymbolicLink(sys.resolve("dev/block").resolve(number), dir);
        return dir;
    }

    private static void slave(Path upper, Path lower) throws IOException {
        Files.createDirectories(upper.resolve("slaves"));
        Files.createSymbolicLink(upper.resolve("slaves").resolve(lower.getFileName()), lower);
    }

    @Test
    void aThinLvLeadsThroughItsPoolToTheDisks() throws IOException {
        Path vda = device("virtual/block/vda", "252:0");
        Path vdb = device("virtual/block/vdb", "252:16");
        Path vdb1 = device("virtual/block/vdb/vdb1", "252:17");
        Files.writeString(vdb1.resolve("partition"), "1\n");
        Path tdata = device("virtual/block/dm-1", "254:1");
        Path pool = device("virtual/block/dm-2", "254:2");
        Path thin = device("virtual/block/dm-3", "254:3");
        slave(tdata, vda);
        slave(tdata, vdb1);
        slave(pool, tdata);
        slave(thin, pool);
        assertEquals(Set.of(new DeviceNumber(252, 0), new DeviceNumber(252, 16)),
                new BackingDisks(sys).of(new DeviceNumber(254, 3)));
    }

    @Test
    void aDiskIsItsOwnDisk() throws IOException {
        device("virtual/block/vda", "252:0");
        assertEquals(Set.of(new DeviceNumber(252, 0)), new BackingDisks(sys).of(new DeviceNumber(252, 0)));
    }

    @Test
    void anUnknownDeviceIsNotFound() {
        assertThrows(DriverException.NotFound.class, () -> new BackingDisks(sys).of(new DeviceNumber(254, 9)));
    }
}
