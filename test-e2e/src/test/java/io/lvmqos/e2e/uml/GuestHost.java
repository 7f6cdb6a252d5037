package io.lvmqos.e2e.uml;

import io.lvmqos.e2e.uml.UmlGuest.VolumeGroup;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * What both kinds of guest ({@link UmlGuest}, {@code QemuGuest}) ask of the host before they boot,
 * asked the same way: root, programs on the host's PATH, and the tools the guest itself runs from the
 * host's files. Also the one check of a setting against its pattern.
 */
public final class GuestHost {

    /** The guest runs with its own PATH over the host's files: its tools are looked for where it looks. */
    private static final List<Path> GUEST_SBIN =
            Stream.of("/usr/sbin", "/usr/bin", "/sbin", "/bin").map(Path::of).toList();

    private GuestHost() {
    }

    /** Whether this JVM runs as root: the guest acts on the host's files with the host user's rights. */
    public static boolean isRoot() {
        try {
            // /proc/self belongs to the user the process runs as.
            return Integer.valueOf(0).equals(Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }

    /** The program in a directory of the host's PATH, if one holds it. */
    public static Optional<Path> findOnPath(String program) {
        String path = Objects.requireNonNullElse(System.getenv("PATH"), "");
        return findIn(Arrays.stream(path.split(":")).filter(dir -> !dir.isEmpty()).map(Path::of).toList(), program);
    }

    private static Optional<Path> findIn(List<Path> dirs, String program) {
        return dirs.stream().map(dir -> dir.resolve(program)).filter(Files::isExecutable).findFirst();
    }

    /**
     * The guest's own tools that are missing, one line each saying how to get it: the module loader
     * it uses ({@code insmod}, {@code modprobe}), lvm, and thin_check where a volume group has a thin pool.
     */
    public static List<String> missingTools(String moduleLoader, List<VolumeGroup> volumeGroups) {
        List<String> missing = new ArrayList<>();
        if (findIn(GUEST_SBIN, moduleLoader).isEmpty()) {
            missing.add(moduleLoader + " not found (the guest loads device-mapper with it): apt-get install kmod");
        }
        if (findIn(GUEST_SBIN, "lvm").isEmpty()) {
            missing.add("lvm not found: apt-get install lvm2");
        }
        boolean thinPools = volumeGroups.stream().anyMatch(vg -> vg.thinPool().isPresent());
        if (thinPools && findIn(GUEST_SBIN, "thin_check").isEmpty()) {
            missing.add("thin_check not found (LVM runs it to activate thin pools): apt-get install thin-provisioning-tools");
        }
        return missing;
    }

    /** Refuses a setting that does not match its pattern, naming what it is. */
    public static void requireMatch(Pattern pattern, String value, String what) {
        if (value == null || !pattern.matcher(value).matches()) {
            throw new IllegalArgumentException("invalid " + what + ": " + value + " (must match " + pattern + ")");
        }
    }
}
