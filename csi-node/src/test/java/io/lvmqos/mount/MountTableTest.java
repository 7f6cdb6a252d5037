package io.lvmqos.mount;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MountTableTest {

    private static String resource(String name) throws IOException {
        try (InputStream in = MountTableTest.class.getResourceAsStream("/mount/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static MountTable table(Path dir, String resource) throws IOException {
        Path file = dir.resolve("mountinfo");
        Files.writeString(file, resource(resource));
        return new MountTable(file);
    }

    @Test
    void parsesEveryFieldOfALine() throws IOException {
        MountEntry entry = MountTable.parse(resource("mountinfo-host.txt")).get(5);
        assertEquals(27, entry.mountId());
        assertEquals(1, entry.parentId());
        assertEquals(new DeviceNumber(254, 0), entry.device());
        assertEquals("/", entry.root());
        assertEquals(Path.of("/"), entry.mountPoint());
        assertEquals(List.of("rw", "relatime"), entry.options());
        assertEquals(List.of(), entry.optionalFields());
        assertEquals("ext4", entry.fsType());
        assertEquals("/dev/vda", entry.source());
        assertEquals(List.of("rw", "discard", "resv_strict", "resuid=65534", "resgid=65534"), entry.superOptions());
    }

    @Test
    void decodesOctalEscapesInPathsAndSource() throws IOException {
        List<MountEntry> entries = MountTable.parse(resource("mountinfo-kubelet.txt"));
        MountEntry spaced = entries.get(4);
        assertEquals(Path.of("/mnt/with space\ttab\\backslash"), spaced.mountPoint());
        assertEquals("/sub dir", spaced.root());
        assertEquals(new DeviceNumber(7, 300), spaced.device());
        MountEntry utf8 = entries.get(5);
        assertEquals(Path.of("/mnt/café"), utf8.mountPoint());
        assertEquals("my tmpfs", utf8.source());
    }

    @Test
    void readsPropagationTags() throws IOException {
        List<MountEntry> entries = MountTable.parse(resource("mountinfo-kubelet.txt"));
        assertEquals(OptionalInt.of(120), entries.get(2).sharedPeerGroup());
        MountEntry slave = entries.get(4);
        assertEquals(List.of("master:5", "propagate_from:2", "unbindable"), slave.optionalFields());
        assertEquals(OptionalInt.empty(), slave.sharedPeerGroup());
    }

    @Test
    void readOnlyIsThePerMountOption() throws IOException {
        List<MountEntry> entries = MountTable.parse(resource("mountinfo-kubelet.txt"));
        assertTrue(entries.get(3).readOnly());
        assertFalse(entries.get(2).readOnly());
    }

    @Test
    void atReturnsTheTopOfStackedMounts(@TempDir Path dir) throws IOException {
        MountTable table = table(dir, "mountinfo-host.txt");
        assertEquals(29, table.at(Path.of("/dev/pts")).orElseThrow().mountId());
        assertEquals(30, table.at(Path.of("/dev/shm/")).orElseThrow().mountId());
        assertEquals(27, table.at(Path.of("/")).orElseThrow().mountId());
        assertTrue(table.at(Path.of("/dev/pts/0")).isEmpty());
    }

    @Test
    void mountsOfADeviceIncludeItsBindMounts(@TempDir Path dir) throws IOException {
        MountTable table = table(dir, "mountinfo-kubelet.txt");
        List<MountEntry> mounts = table.mountsOf(new DeviceNumber(253, 4));
        assertEquals(List.of(310, 311), mounts.stream().map(MountEntry::mountId).toList());
        assertTrue(table.mountsOf(new DeviceNumber(253, 5)).isEmpty());
    }

    @Test
    void mountsBelowAPathAreItsSubmountsOnly(@TempDir Path dir) throws IOException {
        MountTable table = table(dir, "mountinfo-host.txt");
        assertEquals(List.of(38, 41), table.mountsBelow(Path.of("/sys/fs/cgroup")).stream()
                .map(MountEntry::mountId).toList());
        assertTrue(table.mountsBelow(Path.of("/sys/fs/cgroup/blkio")).isEmpty());
    }

    @Test
    void aLineItCannotReadIsAnErrorNamingIt() {
        var e = assertThrows(DriverException.Internal.class,
                () -> MountTable.parse("22 27 0:21 / /proc rw,relatime proc proc rw\n"));
        assertTrue(e.getMessage().contains("line 1"), e.getMessage());
    }

    @Test
    void readsThisProcessesRealMountTable() {
        List<MountEntry> entries = new MountTable().read();
        assertTrue(entries.stream().anyMatch(e -> e.mountPoint().equals(Path.of("/"))));
    }
}
