package io.lvmqos.mount;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One mount looked up by its unique id with statmount(2) (Linux 6.8 and later), the id read from
 * a descriptor with statx(2) and STATX_MNT_ID_UNIQUE. Unlike a read of /proc/self/mountinfo, which
 * makes the kernel format every mount of the namespace, this costs the same with 30 mounts or
 * 3000; and a unique id is never reused, so a mount gone stays gone to it.
 *
 * <p>{@link #system()} probes the kernel once; where either call is missing (ENOSYS, or a kernel
 * that does not report the fields the driver reads), {@link MountTable} keeps to mountinfo. The
 * system property {@code lvmqos.mountinfo=procfs} forces that fallback (tests of it use it).
 */
public final class StatMount {

    private static final Logger log = LoggerFactory.getLogger(StatMount.class);

    public static final String PROPERTY = "lvmqos.mountinfo";

    static final long SYS_STATMOUNT = 457; // x86_64, include/uapi/asm-generic and arch/x86 syscall_64.tbl
    /** struct mnt_id_req as first published: size, spare, mnt_id, param. */
    static final int MNT_ID_REQ_SIZE_VER0 = 24;
    static final long SB_BASIC = 0x1;
    static final long MNT_BASIC = 0x2;
    static final long PROPAGATE_FROM = 0x4;
    static final long MNT_ROOT = 0x8;
    static final long MNT_POINT = 0x10;
    static final long FS_TYPE = 0x20;
    static final long MNT_OPTS = 0x80;
    static final long SB_SOURCE = 0x200;
    static final long WANTED = SB_BASIC | MNT_BASIC | PROPAGATE_FROM | MNT_ROOT | MNT_POINT | FS_TYPE | MNT_OPTS | SB_SOURCE;
    /**
     * What every answer must hold. The kernel leaves a string's bit out when the string is empty
     * (an ext4 mounted without options has no mnt_opts), so those are read as empty when absent;
     * that the kernel knows sb_source at all (6.12+) is checked once, on the root mount, by the probe.
     */
    static final long REQUIRED = SB_BASIC | MNT_BASIC | MNT_ROOT | MNT_POINT | FS_TYPE;
    /** The fixed part of struct statmount; its string offsets count from here. */
    static final int HEADER = 512;
    static final long SB_RDONLY = 0x1;
    static final long MOUNT_ATTR_RDONLY = 0x1;
    static final long MOUNT_ATTR_NOSUID = 0x2;
    static final long MOUNT_ATTR_NODEV = 0x4;
    static final long MOUNT_ATTR_NOEXEC = 0x8;
    static final long MOUNT_ATTR__ATIME = 0x70;
    static final long MOUNT_ATTR_NOATIME = 0x10;
    static final long MOUNT_ATTR_STRICTATIME = 0x20;
    static final long MOUNT_ATTR_NODIRATIME = 0x80;
    static final long MOUNT_ATTR_NOSYMFOLLOW = 0x200000;
    static final long MS_SHARED = 1L << 20;
    static final long MS_SLAVE = 1L << 19;
    static final long MS_UNBINDABLE = 1L << 17;

    private final LibC libc;
    private final IntSupplier lastError;

    StatMount(LibC libc, IntSupplier lastError) {
        this.libc = libc;
        this.lastError = lastError;
    }

    /** A mount table line with the ids of the mount and its parent in the numbering that found it (unique ids here). */
    public record Found(MountEntry entry, long id, long parentId) {
    }

    private static final class Holder {
        static final Optional<StatMount> SYSTEM = probe();

        private static Optional<StatMount> probe() {
            StatMount candidate = new StatMount(NativeLibC.libc(), NativeLibC.lastError());
            int top = candidate.libc.open("/", Beneath.O_PATH | Beneath.O_DIRECTORY | Beneath.O_CLOEXEC);
            if (top < 0) {
                return Optional.empty();
            }
            try (Beneath.Fd fd = new Beneath(candidate.libc, candidate.lastError, Path.of("/")).adopt(top)) {
                long id = fd.uniqueMountId();
                Optional<Found> root = candidate.byId(id);
                if (root.isPresent() && !root.get().entry().source().equals("none")) {
                    log.debug("mounts are looked up by unique id with statmount(2)");
                    return Optional.of(candidate);
                }
            } catch (RuntimeException unsupported) {
                log.info("mounts are looked up in /proc/self/mountinfo: statx/statmount by unique mount id is not"
                        + " available here ({})", unsupported.getMessage());
            }
            return Optional.empty();
        }
    }

    /**
     * The kernel's statmount(2), if it has it (probed once per process) and the property does not
     * turn it off (read at each call, so that a test can make a table of either kind).
     */
    public static Optional<StatMount> system() {
        if ("procfs".equals(System.getProperty(PROPERTY))) {
            return Optional.empty();
        }
        return Holder.SYSTEM;
    }

    /** The mount with this unique id in this process's mount namespace; empty when there is none (any more). */
    public Optional<Found> byId(long uniqueId) {
        byte[] request = ByteBuffer.allocate(MNT_ID_REQ_SIZE_VER0).order(ByteOrder.nativeOrder())
                .putInt(0, MNT_ID_REQ_SIZE_VER0).putLong(8, uniqueId).putLong(16, WANTED).array();
        int size = 4096;
        while (true) {
            byte[] buf = new byte[size];
            if (libc.syscall(SYS_STATMOUNT, request, buf, size, 0L) == 0) {
                return Optional.of(parse(buf));
            }
            int errno = lastError.getAsInt();
            if (errno == Errno.ENOENT.intValue()) {
                return Optional.empty();
            }
            if (errno != Errno.EOVERFLOW.intValue() || size >= (1 << 20)) {
                throw ErrnoStatus.failure("statmount of mount " + uniqueId, errno);
            }
            size *= 4; // long options or paths: the kernel says so rather than cutting them
        }
    }

    /**
     * struct statmount (include/uapi/linux/mount.h) as the kernel wrote it, in this machine's byte
     * order, as a mount table line: the per-mount options from mnt_attr as mountinfo spells them,
     * the propagation tags from mnt_propagation, the superblock's options from mnt_opts after ro or
     * rw. Refused when the kernel left out a field the driver reads.
     */
    static Found parse(byte[] raw) {
        ByteBuffer b = ByteBuffer.wrap(raw).order(ByteOrder.nativeOrder());
        long mask = b.getLong(8);
        if ((mask & REQUIRED) != REQUIRED) {
            throw DriverException.internal("statmount answered fields 0x" + Long.toHexString(mask) + ", not all of 0x"
                    + Long.toHexString(REQUIRED));
        }
        DeviceNumber device = new DeviceNumber(b.getInt(16), b.getInt(20));
        long sbFlags = Integer.toUnsignedLong(b.getInt(32));
        String fsType = string(raw, b.getInt(36));
        long uniqueId = b.getLong(40);
        long uniqueParent = b.getLong(48);
        int oldId = b.getInt(56);
        int oldParent = b.getInt(60);
        long attr = b.getLong(64);
        long propagation = b.getLong(72);
        long peerGroup = b.getLong(80);
        long master = b.getLong(88);
        long propagateFrom = (mask & PROPAGATE_FROM) != 0 ? b.getLong(96) : 0;
        String root = string(raw, b.getInt(104));
        String mountPoint = string(raw, b.getInt(108));
        String source = (mask & SB_SOURCE) != 0 ? string(raw, b.getInt(124)) : "";
        String fsOptions = (mask & MNT_OPTS) != 0 ? string(raw, b.getInt(4)) : "";
        List<String> tags = new ArrayList<>();
        if ((propagation & MS_SHARED) != 0) {
            tags.add("shared:" + peerGroup);
        }
        if ((propagation & MS_SLAVE) != 0) {
            tags.add("master:" + master);
            // as mountinfo: the nearest peer group of this namespace it receives from, when not its master
            if (propagateFrom != 0 && propagateFrom != master) {
                tags.add("propagate_from:" + propagateFrom);
            }
        }
        if ((propagation & MS_UNBINDABLE) != 0) {
            tags.add("unbindable");
        }
        List<String> superOptions = new ArrayList<>();
        superOptions.add((sbFlags & SB_RDONLY) != 0 ? "ro" : "rw");
        if (!fsOptions.isEmpty()) {
            superOptions.addAll(Arrays.stream(fsOptions.split(",")).map(MountinfoEscapes::unescape).toList());
        }
        MountEntry entry = new MountEntry(oldId, oldParent, device, root, Path.of(mountPoint), options(attr), tags,
                fsType, source.isEmpty() ? "none" : source, superOptions);
        return new Found(entry, uniqueId, uniqueParent);
    }

    /** mnt_attr as mountinfo's fifth field spells it, in the kernel's order. */
    static List<String> options(long attr) {
        List<String> options = new ArrayList<>();
        options.add((attr & MOUNT_ATTR_RDONLY) != 0 ? "ro" : "rw");
        if ((attr & MOUNT_ATTR_NOSUID) != 0) {
            options.add("nosuid");
        }
        if ((attr & MOUNT_ATTR_NODEV) != 0) {
            options.add("nodev");
        }
        if ((attr & MOUNT_ATTR_NOEXEC) != 0) {
            options.add("noexec");
        }
        long atime = attr & MOUNT_ATTR__ATIME;
        if (atime == MOUNT_ATTR_NOATIME) {
            options.add("noatime");
        }
        if ((attr & MOUNT_ATTR_NODIRATIME) != 0) {
            options.add("nodiratime");
        }
        if (atime != MOUNT_ATTR_NOATIME && atime != MOUNT_ATTR_STRICTATIME) {
            options.add("relatime");
        }
        if ((attr & MOUNT_ATTR_NOSYMFOLLOW) != 0) {
            options.add("nosymfollow");
        }
        return options;
    }

    /** A NUL-ended string at {@code offset} in the variable part (UTF-8, as the kernel keeps names). */
    private static String string(byte[] raw, int offset) {
        int start = HEADER + offset;
        if (offset < 0 || start >= raw.length) {
            throw DriverException.internal("statmount string offset " + offset + " is outside its buffer");
        }
        int end = start;
        while (end < raw.length && raw[end] != 0) {
            end++;
        }
        return new String(raw, start, end - start, StandardCharsets.UTF_8);
    }
}
