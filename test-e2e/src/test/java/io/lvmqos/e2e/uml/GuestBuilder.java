package io.lvmqos.e2e.uml;

import io.lvmqos.e2e.uml.UmlGuest.ThinPool;
import io.lvmqos.e2e.uml.UmlGuest.VolumeGroup;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The settings both kinds of guest take ({@link UmlGuest.Builder}, {@code QemuGuest.Builder}): name,
 * memory, disks, volume groups and thin pools, cgroup hierarchy, modules, payload, environment,
 * timeout, kept disks. Each kind adds its own (UML's run directory and reused disks, qemu's CPUs, disk
 * throttle and cgroup controllers) and its kernel; every one but the payload has a default.
 *
 * @param <B> the kind's builder, returned by every setter so that a chain keeps the kind's own ones
 */
public abstract class GuestBuilder<B extends GuestBuilder<B>> implements GuestSpec {

    /** Both guests' limit: UML's ubd driver has 16 devices (ubda..ubdp); the qemu node takes as many. */
    public static final int MAX_DISKS = 16;
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]+");
    private static final Pattern MEMORY = Pattern.compile("\\d+[KMG]");
    private static final Pattern DISK_SIZE = Pattern.compile("(\\d+)([KMGT]?)");
    private static final Pattern MODULE = Pattern.compile("[A-Za-z0-9_-]+");
    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    /** What a guest is built from: the settings common to both kinds, as they were at build time. */
    public record Settings(String name, String memory, List<Long> diskSizes, List<VolumeGroup> volumeGroups,
            CgroupMode cgroupMode, String cgroupRoot, List<String> extraModules, String payload,
            Map<String, String> environment, Duration timeout, boolean keepDisks) {
        public Settings {
            diskSizes = List.copyOf(diskSizes);
            volumeGroups = List.copyOf(volumeGroups);
            extraModules = List.copyOf(extraModules);
            environment = Map.copyOf(environment);
        }
    }

    private final String tooManyDisks;
    private String name;
    private String memory;
    private final List<Long> diskSizes = new ArrayList<>();
    private final Map<String, VolumeGroup> volumeGroups = new LinkedHashMap<>();
    private CgroupMode cgroupMode = CgroupMode.V2;
    private String cgroupRoot = UmlGuest.DEFAULT_CGROUP_ROOT;
    private final List<String> extraModules = new ArrayList<>();
    private String payload;
    private final Map<String, String> environment = new LinkedHashMap<>();
    private Duration timeout;

    private boolean keepDisks;

    /**
     * @param name the run directory's name unless {@link #name} sets one
     * @param tooManyDisks the message when a disk beyond {@value #MAX_DISKS} is added
     */
    protected GuestBuilder(String name, String memory, Duration timeout, String tooManyDisks) {
        this.name = name;
        this.memory = memory;
        this.timeout = timeout;
        this.tooManyDisks = tooManyDisks;
    }

    /** {@code this}, as the kind's builder. */
    protected abstract B self();

    /** An independent builder with the same settings, to derive a variant without changing this one. */
    public abstract B copy();

    /** The guest these settings describe; the builder can go on to describe another. */
    public abstract Guest build();

    @Override
    public final GuestRun runWith(String payload) {
        return copy().payload(payload).build().run();
    }

    /** Gives {@code copy} these common settings; the kind's {@code copy()} adds its own. */
    protected final B copyInto(B copy) {
        GuestBuilder<B> target = copy;
        target.name = name;
        target.memory = memory;
        target.diskSizes.addAll(diskSizes);
        target.volumeGroups.putAll(volumeGroups);
        target.cgroupMode = cgroupMode;
        target.cgroupRoot = cgroupRoot;
        target.extraModules.addAll(extraModules);
        target.payload = payload;
        target.environment.putAll(environment);
        target.timeout = timeout;
        target.keepDisks = keepDisks;
        return copy;
    }

    /** The settings to build from, once checked: a payload, and every volume group on disks that exist. */
    protected final Settings settings() {
        if (payload == null) {
            throw new IllegalStateException("a guest needs a payload");
        }
        for (VolumeGroup vg : volumeGroups.values()) {
            for (int disk : vg.disks()) {
                if (disk < 0 || disk >= diskSizes.size()) {
                    throw new IllegalStateException("volume group " + vg.name() + " uses disk " + disk
                            + " but there are " + diskSizes.size() + " disks");
                }
            }
        }
        return new Settings(name, memory, diskSizes, List.copyOf(volumeGroups.values()), cgroupMode, cgroupRoot,
                extraModules, payload, environment, timeout, keepDisks);
    }

    /** Names the run directory, to find it among others: letters, digits, '.', '_' and '-'. */
    public B name(String name) {
        GuestHost.requireMatch(NAME, name, "guest name");
        this.name = name;
        return self();
    }

    /** The guest's memory, as UML's {@code mem=} and qemu's {@code -m} take it: {@code 1536M}, {@code 2G}. */
    public B memory(String memory) {
        GuestHost.requireMatch(MEMORY, memory, "memory");
        this.memory = memory;
        return self();
    }

    /**
     * Adds a sparse disk: {@code 4G}, {@code 512M}. The n-th disk is {@code /dev/ubd<a+n>} in a UML
     * guest, {@code /dev/vd<a+n>} in a qemu one.
     */
    public B disk(String size) {
        var matcher = DISK_SIZE.matcher(size);
        if (!matcher.matches()) {
            throw new IllegalArgumentException("invalid disk size: " + size + " (e.g. 4G, 512M)");
        }
        int shift = switch (matcher.group(2)) {
            case "K" -> 10;
            case "M" -> 20;
            case "G" -> 30;
            case "T" -> 40;
            default -> 0;
        };
        return disk(Math.multiplyExact(Long.parseLong(matcher.group(1)), 1L << shift));
    }

    public B disk(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("disk size must be positive: " + bytes);
        }
        if (diskSizes.size() == MAX_DISKS) {
            throw new IllegalArgumentException(tooManyDisks);
        }
        diskSizes.add(bytes);
        return self();
    }

    /** A volume group on the disks with these indexes (in {@link #disk} order), each a whole-disk PV. */
    public B volumeGroup(String name, int... diskIndexes) {
        if (diskIndexes.length == 0) {
            throw new IllegalArgumentException("volume group " + name + " needs at least one disk");
        }
        List<Integer> disks = Arrays.stream(diskIndexes).boxed().toList();
        volumeGroups.put(name, new VolumeGroup(name, disks, Optional.empty()));
        return self();
    }

    /** A thin pool (zeroing on) in a volume group declared before. */
    public B thinPool(String volumeGroup, String pool, String size) {
        VolumeGroup vg = volumeGroups.get(volumeGroup);
        if (vg == null) {
            throw new IllegalArgumentException("declare volume group " + volumeGroup + " before its thin pool");
        }
        volumeGroups.put(volumeGroup,
                new VolumeGroup(vg.name(), vg.disks(), Optional.of(new ThinPool(pool, size))));
        return self();
    }

    /** The cgroup hierarchy, mounted at {@value UmlGuest#DEFAULT_CGROUP_ROOT}. Default: {@link CgroupMode#V2}. */
    public B cgroup(CgroupMode mode) {
        return cgroup(mode, UmlGuest.DEFAULT_CGROUP_ROOT);
    }

    public B cgroup(CgroupMode mode, String root) {
        this.cgroupMode = Objects.requireNonNull(mode);
        if (!root.startsWith("/")) {
            throw new IllegalArgumentException("cgroup root must be absolute: " + root);
        }
        this.cgroupRoot = root;
        return self();
    }

    /** Further kernel modules to load after the device-mapper ones, by name: {@code dm-delay}. */
    public B modules(String... names) {
        for (String module : names) {
            GuestHost.requireMatch(MODULE, module, "module name");
            extraModules.add(module);
        }
        return self();
    }

    /** The payload: a command line the guest runs with {@code sh -c}, as root, in /tmp. */
    public B payload(String shellCommandLine) {
        this.payload = Objects.requireNonNull(shellCommandLine);
        return self();
    }

    /** The payload as an argument list, each word quoted for the guest's shell. */
    public B payload(List<String> argv) {
        if (argv.isEmpty()) {
            throw new IllegalArgumentException("empty payload");
        }
        return payload(argv.stream().map(UmlGuest::shellQuote).collect(Collectors.joining(" ")));
    }

    /** An environment variable for the payload; it may override the ones init sets ({@link GuestEnv}). */
    public B env(String name, String value) {
        GuestHost.requireMatch(ENV_NAME, name, "environment variable name");
        environment.put(name, Objects.requireNonNull(value));
        return self();
    }

    /** The whole run's limit: boot, setup and payload. The default is the kind's {@code DEFAULT_TIMEOUT}. */
    public B timeout(Duration timeout) {
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive: " + timeout);
        }
        this.timeout = timeout;
        return self();
    }

    /** Keep the disk images after a successful run (a failed run always keeps them). */
    public B keepDisks(boolean keep) {
        this.keepDisks = keep;
        return self();
    }
}
