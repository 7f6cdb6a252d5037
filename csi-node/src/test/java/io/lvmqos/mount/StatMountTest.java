package io.lvmqos.mount;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** struct statmount as the kernel lays it out (include/uapi/linux/mount.h), read into a mount table line. */
class StatMountTest {

    /** A buffer as statmount(2) fills it: the fixed part, then the strings at the offsets it names. */
    private static byte[] statmount(long mask, long attr, long propagation, String... strings) {
        ByteBuffer b = ByteBuffer.allocate(2048).order(ByteOrder.nativeOrder());
        b.putLong(8, mask);
        b.putInt(16, 254).putInt(20, 300); // sb_dev_major, sb_dev_minor
        b.putInt(32, 0); // sb_flags: read-write superblock
        b.putLong(40, 0x80000123L).putLong(48, 0x80000045L); // unique ids of the mount and its parent
        b.putInt(56, 612).putInt(60, 87); // the ids mountinfo shows
        b.putLong(64, attr).putLong(72, propagation).putLong(80, 7).putLong(88, 3).putLong(96, 5);
        // strings in order: mnt_opts, fs_type, mnt_root, mnt_point, sb_source
        int[] fields = {4, 36, 104, 108, 124};
        int at = 0;
        for (int i = 0; i < fields.length; i++) {
            b.putInt(fields[i], at);
            byte[] text = strings[i].getBytes(StandardCharsets.UTF_8);
            b.put(StatMount.HEADER + at, text);
            at += text.length + 1;
        }
        b.putInt(0, StatMount.HEADER + at);
        return b.array();
    }

    @Test
    void aBindMountOfAnLvReadsAsItsMountinfoLine() {
        StatMount.Found found = StatMount.parse(statmount(StatMount.WANTED,
                StatMount.MOUNT_ATTR_NOSUID | StatMount.MOUNT_ATTR_NODEV, 1L << 20,
                "errors=remount-ro", "ext4", "/", "/var/lib/kubelet/pods/p 1/volumes/x/mount", "/dev/mapper/vg-lv"));
        assertEquals(0x80000123L, found.id());
        assertEquals(0x80000045L, found.parentId());
        MountEntry expected = new MountEntry(612, 87, new DeviceNumber(254, 300), "/",
                Path.of("/var/lib/kubelet/pods/p 1/volumes/x/mount"), List.of("rw", "nosuid", "nodev", "relatime"),
                List.of("shared:7"), "ext4", "/dev/mapper/vg-lv", List.of("rw", "errors=remount-ro"));
        assertEquals(expected, found.entry());
    }

    @Test
    void aReadOnlySlaveMountKeepsBothAndItsAtimeFlags() {
        MountEntry entry = StatMount.parse(statmount(StatMount.WANTED,
                StatMount.MOUNT_ATTR_RDONLY | StatMount.MOUNT_ATTR_NOATIME | StatMount.MOUNT_ATTR_NODIRATIME
                        | StatMount.MOUNT_ATTR_NOSYMFOLLOW, 1L << 19, "", "xfs", "/sub", "/mnt", "")).entry();
        assertEquals(List.of("ro", "noatime", "nodiratime", "nosymfollow"), entry.options());
        assertEquals(List.of("master:3", "propagate_from:5"), entry.optionalFields());
        assertEquals(List.of("rw"), entry.superOptions());
        assertEquals("none", entry.source());
        assertEquals("/sub", entry.root());
        assertEquals(true, entry.readOnly());
    }

    @Test
    void strictatimeShowsNoAtimeOption() {
        assertEquals(List.of("rw"), StatMount.options(StatMount.MOUNT_ATTR_STRICTATIME));
    }

    @Test
    void emptyOptionsAndSourceAreLeftOutOfTheMaskAndReadAsEmpty() {
        // the kernel clears a string's bit when the string is empty: an ext4 mounted without options
        byte[] raw = statmount(StatMount.WANTED & ~StatMount.MNT_OPTS & ~StatMount.SB_SOURCE, 0, 0,
                "garbage", "ext4", "/", "/mnt", "garbage");
        MountEntry entry = StatMount.parse(raw).entry();
        assertEquals(List.of("rw"), entry.superOptions());
        assertEquals("none", entry.source());
    }

    @Test
    void anAnswerWithoutTheMountPointIsRefused() {
        byte[] raw = statmount(StatMount.WANTED & ~StatMount.MNT_POINT, 0, 0, "", "ext4", "/", "/mnt", "");
        var e = assertThrows(DriverException.Internal.class, () -> StatMount.parse(raw));
        assertEquals(true, e.getMessage().contains("0x"), e.getMessage());
    }

    @Test
    void aStringOffsetPastTheBufferIsRefused() {
        byte[] raw = statmount(StatMount.WANTED, 0, 0, "", "ext4", "/", "/mnt", "");
        ByteBuffer.wrap(raw).order(ByteOrder.nativeOrder()).putInt(108, 4096);
        assertThrows(DriverException.Internal.class, () -> StatMount.parse(raw));
    }
}
