package io.lvmqos.e2e.uml;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Assumptions;

/**
 * What a guest-side check learns about the guest it runs in, from the environment the guest's init
 * exports. The names are also the keys of the parameters file {@link UmlGuest} writes, so host and
 * guest agree on them in one place.
 */
public final class GuestEnv {
    /** {@code 1} inside the guest. */
    public static final String GUEST = "LVMQOS_GUEST";
    /** Which kind of guest: {@code uml} (user-mode Linux) or {@code qemu} (Debian's stock kernel under qemu). */
    public static final String GUEST_KIND = "LVMQOS_GUEST_KIND";
    /** The run's output directory: writable, the same absolute path in the guest and on the host. */
    public static final String OUT = "LVMQOS_OUT";
    /** The host's run directory, read-only in the guest. */
    public static final String RUN_DIR = "LVMQOS_RUN_DIR";
    /** Space-separated block devices of the disks, in builder order: {@code /dev/ubda /dev/ubdb} (UML), {@code /dev/vda} (qemu). */
    public static final String DISKS = "LVMQOS_DISKS";
    /** Space-separated names of the volume groups init created. */
    public static final String VGS = "LVMQOS_VGS";
    /** The first volume group's name. */
    public static final String VG = "LVMQOS_VG";
    /** The first volume group's thin pool, empty when it has none. */
    public static final String THIN_POOL = "LVMQOS_THIN_POOL";
    /** Space-separated {@code vg/pool} of every thin pool. */
    public static final String THIN_POOLS = "LVMQOS_THIN_POOLS";
    /** {@code v2}, {@code v1} or {@code none}: see {@link CgroupMode#guestName()}. */
    public static final String CGROUP_MODE = "LVMQOS_CGROUP_MODE";
    /** The cgroup2 mount point (v2), or the tmpfs that holds {@code blkio/} (v1). */
    public static final String CGROUP_ROOT = "LVMQOS_CGROUP_ROOT";
    /** The kernel's module directory, for a check that insmods a further module. */
    public static final String MODULE_DIR = "LVMQOS_MODULE_DIR";
    /** qemu's throttle of each disk in I/O operations per second; unset in UML, or where qemu does not throttle. */
    public static final String DISK_IOPS = "LVMQOS_DISK_IOPS";
    /** The driver's jar, from the host's system property {@code lvmqos.jar}, when it is set. */
    public static final String DRIVER_JAR = "LVMQOS_JAR";
    /** {@code systemd} when systemd is the guest's PID 1 and runs init as a service; {@code none} otherwise. */
    public static final String INIT_SYSTEM = "LVMQOS_INIT_SYSTEM";

    private GuestEnv() {
    }

    public static boolean inGuest() {
        return "1".equals(System.getenv(GUEST));
    }

    /**
     * Aborts (skips) the calling test outside the guest, so that a check started on the host by
     * mistake never runs LVM or cgroup commands against the host.
     */
    public static void assumeInGuest() {
        Assumptions.assumeTrue(inGuest(), "runs only inside a test guest (UML or qemu): start it with GuestJUnit");
    }

    /** {@code uml} or {@code qemu}; {@code uml} where init said nothing (it always says, since qemu guests exist). */
    public static String guestKind() {
        return optional(GUEST_KIND).orElse("uml");
    }

    /** Whether systemd is PID 1 (a qemu guest built with {@code systemd()}). */
    public static boolean underSystemd() {
        return optional(INIT_SYSTEM).filter("systemd"::equals).isPresent();
    }

    public static Path outDir() {
        return Path.of(required(OUT));
    }

    public static List<Path> disks() {
        return words(required(DISKS)).stream().map(Path::of).toList();
    }

    public static String volumeGroup() {
        return required(VG);
    }

    public static List<String> volumeGroups() {
        return words(required(VGS));
    }

    public static Optional<String> thinPool() {
        return optional(THIN_POOL);
    }

    public static CgroupMode cgroupMode() {
        return CgroupMode.ofGuestName(required(CGROUP_MODE));
    }

    public static Path cgroupRoot() {
        return Path.of(required(CGROUP_ROOT));
    }

    public static Path moduleDir() {
        return Path.of(required(MODULE_DIR));
    }

    public static OptionalInt diskIops() {
        return optional(DISK_IOPS).map(value -> OptionalInt.of(Integer.parseInt(value))).orElse(OptionalInt.empty());
    }

    public static Optional<Path> driverJar() {
        return optional(DRIVER_JAR).map(Path::of);
    }

    private static String required(String name) {
        return optional(name).orElseThrow(() -> new IllegalStateException(
                name + " is not set: " + (inGuest() ? "the guest was built without it" : "not in a test guest")));
    }

    private static Optional<String> optional(String name) {
        return Optional.ofNullable(System.getenv(name)).filter(value -> !value.isBlank());
    }

    private static List<String> words(String value) {
        return Arrays.stream(value.trim().split("\\s+")).filter(word -> !word.isEmpty()).toList();
    }
}
