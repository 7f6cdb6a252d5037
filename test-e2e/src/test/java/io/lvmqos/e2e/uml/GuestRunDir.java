package io.lvmqos.e2e.uml;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.lvmqos.e2e.uml.UmlGuest.ThinPool;
import io.lvmqos.e2e.uml.UmlGuest.VolumeGroup;
import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A guest run's directory on the host, the same for both kinds of guest ({@link UmlGuest} and
 * {@code io.lvmqos.e2e.qemu.QemuGuest}): the sparse disk images, the init script (resource
 * {@code uml/init.sh}, shared by both), the parameters init reads (params.sh), the payload's
 * environment (payload-env.sh), and out/, which the guest writes. The guest sees the directory
 * read-only at the same absolute path, and out/ writable.
 */
public final class GuestRunDir {
    /** System property: where run directories go. */
    public static final String RUN_DIR_PROPERTY = "lvmqos.runDir";
    static final String DEFAULT_BASE = "target/uml-runs";

    // The run directory reaches kernel command lines (split at blanks) and option strings (split at
    // ',' and ':'): keep its path to characters that need no quoting anywhere.
    static final Pattern SAFE_PATH = Pattern.compile("[A-Za-z0-9/._+-]+");
    // The guest mounts its own file systems over these, hiding the host's.
    private static final List<Path> HIDDEN_IN_GUEST =
            Stream.of("/run", "/dev", "/proc", "/sys").map(Path::of).toList();

    private GuestRunDir() {
    }

    /** A fresh directory {@code <name>-<time>-<random>} with an empty out/, under {@value #RUN_DIR_PROPERTY}. */
    public static Path create(String name) {
        Path base = checked(Path.of(System.getProperty(RUN_DIR_PROPERTY, DEFAULT_BASE)), RUN_DIR_PROPERTY);
        String stamp = LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
        String random = "%06x".formatted(ThreadLocalRandom.current().nextInt(1 << 24));
        return withOut(base.resolve(name + "-" + stamp + "-" + random));
    }

    /**
     * This directory (made if missing) with an empty out/, for a caller that keeps files of its own
     * beside the guest's, as ./demo keeps its build log.
     */
    public static Path use(Path dir) {
        return withOut(checked(dir, "the run directory"));
    }

    private static Path checked(Path dir, String what) {
        Path base = dir.toAbsolutePath().normalize();
        if (HIDDEN_IN_GUEST.stream().anyMatch(base::startsWith)) {
            throw new IllegalStateException(what + " " + base + " is under a directory the guest"
                    + " mounts its own file system on, so the guest could not see it; choose another");
        }
        if (!SAFE_PATH.matcher(base.toString()).matches()) {
            throw new IllegalArgumentException("invalid " + what + ": " + base + " (must match " + SAFE_PATH + ")");
        }
        return base;
    }

    private static Path withOut(Path runDir) {
        try {
            Files.createDirectories(outDir(runDir));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the run directory " + runDir, e);
        }
        return runDir;
    }

    public static Path outDir(Path runDir) {
        return runDir.resolve("out");
    }

    public static Path init(Path runDir) {
        return runDir.resolve("init.sh");
    }

    public static Path params(Path runDir) {
        return runDir.resolve("params.sh");
    }

    public static Path diskImage(Path runDir, int index) {
        return runDir.resolve("disk" + index + ".img");
    }

    /**
     * The parameters both kinds of guest give init for the run directory and the storage: the keys of
     * {@link GuestEnv} and the per-volume-group {@code LVMQOS_VG_<i>_*} that init's vg stage reads.
     * {@code devices} are the guest's device paths of the disks, in builder order.
     */
    public static Map<String, String> layout(Path runDir, List<String> devices, List<VolumeGroup> volumeGroups) {
        Map<String, String> params = new LinkedHashMap<>();
        params.put(GuestEnv.RUN_DIR, runDir.toString());
        params.put(GuestEnv.OUT, outDir(runDir).toString());
        params.put(GuestEnv.DISKS, String.join(" ", devices));
        params.put(GuestEnv.VGS, volumeGroups.stream().map(VolumeGroup::name).collect(Collectors.joining(" ")));
        params.put(GuestEnv.VG, volumeGroups.isEmpty() ? "" : volumeGroups.getFirst().name());
        params.put(GuestEnv.THIN_POOL, volumeGroups.isEmpty() ? ""
                : volumeGroups.getFirst().thinPool().map(ThinPool::name).orElse(""));
        params.put(GuestEnv.THIN_POOLS, volumeGroups.stream()
                .flatMap(vg -> vg.thinPool().stream().map(pool -> vg.name() + "/" + pool.name()))
                .collect(Collectors.joining(" ")));
        params.put("LVMQOS_VG_COUNT", Integer.toString(volumeGroups.size()));
        for (int i = 0; i < volumeGroups.size(); i++) {
            VolumeGroup vg = volumeGroups.get(i);
            String prefix = "LVMQOS_VG_" + i + "_";
            params.put(prefix + "NAME", vg.name());
            params.put(prefix + "PVS", vg.disks().stream().map(devices::get).collect(Collectors.joining(" ")));
            params.put(prefix + "THIN_POOL", vg.thinPool().map(ThinPool::name).orElse(""));
            params.put(prefix + "THIN_POOL_SIZE", vg.thinPool().map(ThinPool::size).orElse(""));
        }
        return params;
    }

    /** The payload's own variables: the driver's jar (system property {@code lvmqos.jar}), then the test's. */
    public static Map<String, String> payloadEnvironment(Map<String, String> environment) {
        Map<String, String> env = new LinkedHashMap<>();
        Optional.ofNullable(System.getProperty("lvmqos.jar")).ifPresent(jar -> env.put(GuestEnv.DRIVER_JAR, jar));
        env.putAll(environment);
        return env;
    }

    /**
     * Writes the sparse disks, the init script, params.sh (with {@code LVMQOS_PAYLOAD_ENV} naming
     * payload-env.sh, added here) and payload-env.sh.
     */
    public static void prepare(Path runDir, List<Long> diskSizes, Map<String, String> params,
            Map<String, String> payloadEnvironment) {
        try {
            for (int i = 0; i < diskSizes.size(); i++) {
                // Sparse: a 4 GiB disk costs only the blocks the guest writes.
                try (RandomAccessFile disk = new RandomAccessFile(diskImage(runDir, i).toFile(), "rw")) {
                    disk.setLength(diskSizes.get(i));
                }
            }
            // The guest execs init, so it must be a file with the execute bit; a classpath resource is neither.
            Path init = init(runDir);
            try (InputStream script = GuestRunDir.class.getResourceAsStream("/uml/init.sh")) {
                if (script == null) {
                    throw new IllegalStateException("resource /uml/init.sh is missing from the test classpath");
                }
                Files.copy(script, init, StandardCopyOption.REPLACE_EXISTING);
            }
            Files.setPosixFilePermissions(init, PosixFilePermissions.fromString("r-xr-xr-x"));
            Path payloadEnv = runDir.resolve("payload-env.sh");
            Map<String, String> all = new LinkedHashMap<>(params);
            all.put("LVMQOS_PAYLOAD_ENV", payloadEnv.toString());
            Files.writeString(params(runDir), shellAssignments(all, ""), UTF_8);
            Files.writeString(payloadEnv, shellAssignments(payloadEnvironment, "export "), UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot prepare the run directory " + runDir, e);
        }
    }

    /** Deletes the disk images (a run that passed needs them no more). */
    public static void deleteDisks(Path runDir, int count) {
        for (int i = 0; i < count; i++) {
            try {
                Files.deleteIfExists(diskImage(runDir, i));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    private static String shellAssignments(Map<String, String> values, String prefix) {
        return values.entrySet().stream()
                .map(entry -> prefix + entry.getKey() + "=" + UmlGuest.shellQuote(entry.getValue()) + "\n")
                .collect(Collectors.joining());
    }
}
