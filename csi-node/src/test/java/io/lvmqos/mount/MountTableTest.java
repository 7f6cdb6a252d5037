package io.lvmqos.mount;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
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
import java.util.Optional;
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
    void byIdParsesTheLineOfThatMountOnly(@TempDir Path dir) throws IOException {
        MountTable table = table(dir, "mountinfo-kubelet.txt");
        assertEquals(Path.of("/"), table.byId(1).orElseThrow().mountPoint());
        assertEquals(311, table.byId(311).orElseThrow().mountId());
        assertEquals(Path.of("/mnt/café"), table.byId(413).orElseThrow().mountPoint());
        // 31 is a prefix of 310 and 311, and 25 ends the parent field of both: neither is a match
        assertTrue(table.byId(31).isEmpty());
        assertTrue(table.byId(0).isEmpty());
    }

    @Test
    void selectedKeepsTheMountsAtThePathsAndOfTheDevice(@TempDir Path dir) throws IOException {
        MountTable table = table(dir, "mountinfo-kubelet.txt");
        assertEquals(List.of(310, 311), ids(table.selected(List.of(), Optional.of(new DeviceNumber(253, 4)), false)));
        assertEquals(List.of(25, 412), ids(table.selected(List.of(Path.of("/var/lib/kubelet/"),
                Path.of("/mnt/with space\ttab\\backslash")), Optional.empty(), false)));
        assertEquals(List.of(413), ids(table.selected(List.of(Path.of("/mnt/café")), Optional.empty(), false)));
        assertTrue(table.selected(List.of(Path.of("/var/lib")), Optional.of(new DeviceNumber(8, 2)), false).isEmpty());
    }

    @Test
    void selectedWithDeviceNodesKeepsEveryDevtmpfsMount(@TempDir Path dir) throws IOException {
        MountTable table = table(dir, "mountinfo-host.txt");
        List<MountEntry> all = table.read();
        List<Integer> devtmpfs = all.stream().filter(e -> e.fsType().equals("devtmpfs")).map(MountEntry::mountId).toList();
        assertFalse(devtmpfs.isEmpty());
        assertEquals(devtmpfs, ids(table.selected(List.of(), Optional.empty(), true)));
    }

    @Test
    void selectedAndByIdAgreeWithTheWholeTable(@TempDir Path dir) throws IOException {
        MountTable table = table(dir, "mountinfo-host.txt");
        for (MountEntry entry : table.read()) {
            assertEquals(entry, table.byId(entry.mountId()).orElseThrow());
            assertTrue(table.selected(List.of(entry.mountPoint()), Optional.empty(), false).contains(entry));
            assertEquals(MountTable.topAt(table.read(), entry.mountPoint()), table.at(entry.mountPoint()));
        }
    }

    @Test
    void mentioningFindsTheLinesNamingATextDecodedOrNot(@TempDir Path dir) throws IOException {
        MountTable table = table(dir, "mountinfo-kubelet.txt");
        assertEquals(List.of(311), ids(table.mentioning("7c1d6e0a-2b2f-4d8a-9c55-1f0e2b9a7d31")));
        assertEquals(List.of(412), ids(table.mentioning("space\ttab")));
        assertEquals(List.of(413), ids(table.mentioning("café")));
        assertTrue(table.mentioning("0b3c9f1e-0000-4000-8000-000000000000").isEmpty());
    }

    @Test
    void aSnapshotAnswersFromTheTableAsReadEvenAfterTheFileChanges(@TempDir Path dir) throws IOException {
        MountTable table = table(dir, "mountinfo-kubelet.txt");
        MountTable.Snapshot snapshot = table.snapshot();
        Files.writeString(dir.resolve("mountinfo"), "");
        assertTrue(table.mentioning("7c1d6e0a-2b2f-4d8a-9c55-1f0e2b9a7d31").isEmpty(), "the table itself reads afresh");
        assertEquals(List.of(311), ids(snapshot.mentioning("7c1d6e0a-2b2f-4d8a-9c55-1f0e2b9a7d31")));
        assertEquals(List.of(310, 311), ids(snapshot.selected(List.of(), Optional.of(new DeviceNumber(253, 4)), false)));
    }

    @Test
    void linesContainingPicksEachLineOnceInTableOrderWithEveryEscapedOne() {
        String table = "1 0 0:1 / / rw - rootfs a rw\n2 1 8:1 / /a rw - ext4 a rw\n3 1 8:2 / /b\\040c rw - ext4 b rw\n"
                + "4 1 8:1 / /d rw - ext4 a rw";
        assertEquals(List.of("2 1 8:1 / /a rw - ext4 a rw", "3 1 8:2 / /b\\040c rw - ext4 b rw",
                "4 1 8:1 / /d rw - ext4 a rw"), MountTable.linesContaining(table, List.of(" 8:1 ", " /a ")));
        assertEquals(List.of("3 1 8:2 / /b\\040c rw - ext4 b rw"), MountTable.linesContaining(table, List.of("zzz")));
        assertEquals(List.of("1 0 0:1 / / rw - rootfs a rw", "3 1 8:2 / /b\\040c rw - ext4 b rw"),
                MountTable.linesContaining(table, List.of("rootfs")));
    }

    private static List<Integer> ids(List<MountEntry> entries) {
        return entries.stream().map(MountEntry::mountId).toList();
    }

    @Test
    void aLineItCannotReadIsAnErrorNamingIt() {
        var e = assertThrows(DriverException.Internal.class,
                () -> MountTable.parse("22 27 0:21 / /proc rw,relatime proc proc rw\n"));
        assertTrue(e.getMessage().contains("line 1"), e.getMessage());
    }

    @Test
    void aRefusalIsTheLinesNumberTheLineAndTheFieldsReason() {
        // only a field's IllegalArgumentException is a line not understood; any other exception is a defect that shows
        var e = assertThrows(DriverException.Internal.class,
                () -> MountTable.parse("\n36 35 98:0 / /mnt rw - ext4 /dev/root rw\n3x 35 98:0 / /mnt rw - ext4 /dev/root rw\n"));
        assertEquals("mountinfo line 3 is not understood: '3x 35 98:0 / /mnt rw - ext4 /dev/root rw': "
                + "For input string: \"3x\"", e.getMessage());
        assertInstanceOf(NumberFormatException.class, e.getCause());
    }

    @Test
    void aPropagationTagWithoutANumberIsRefusedWithItsLine() {
        // MountTableFuzzTest's finding: the line was read, and sharedPeerGroup() then threw NumberFormatException
        var e = assertThrows(DriverException.Internal.class,
                () -> MountTable.parse("36 35 98:0 / /mnt rw shared:2147x83647 - ext4 /dev/root rw\n"));
        assertTrue(e.getMessage().contains("line 1") && e.getMessage().contains("shared:2147x83647"), e.getMessage());
        assertThrows(DriverException.Internal.class,
                () -> MountTable.parse("36 35 98:0 / /mnt rw master:99999999999 - ext4 /dev/root rw\n"));
        assertEquals(OptionalInt.of(7), MountTable.parse("36 35 98:0 / /mnt rw shared:7 future:x - ext4 /dev/root rw\n")
                .getFirst().sharedPeerGroup());
    }

    @Test
    void readsThisProcessesRealMountTable() {
        List<MountEntry> entries = new MountTable().read();
        assertTrue(entries.stream().anyMatch(e -> e.mountPoint().equals(Path.of("/"))));
    }
}
