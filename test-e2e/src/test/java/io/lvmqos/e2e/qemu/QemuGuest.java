package io.lvmqos.e2e.qemu;

import io.lvmqos.e2e.uml.Guest;
import io.lvmqos.e2e.uml.GuestBuilder;
import io.lvmqos.e2e.uml.GuestEnv;
import io.lvmqos.e2e.uml.GuestHost;
import io.lvmqos.e2e.uml.GuestProcess;
import io.lvmqos.e2e.uml.GuestRunDir;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A qemu guest for real-kernel tests that user-mode Linux cannot run: Debian's stock kernel (6.1 on
 * Debian 12, with io.cost, BFQ group scheduling and PSI) under {@code qemu-system-x86_64 -accel tcg}.
 * The kernel, its initramfs and its modules are the ones {@code scripts/qemu.sh}'s
 * {@code lvmqos_pick_qemu} fetched and proved by a probe boot ({@value #KERNEL_VARIABLE},
 * {@value #INITRD_VARIABLE}, {@value #MODULES_VARIABLE}).
 *
 * <p>The guest's root is the host's {@code /}, read-only over 9p, so the host's JDK, lvm2, fio and the
 * test class path are there, as in the UML guest; the host's /tmp is mounted writable over 9p, and the
 * run's out directory at its own absolute path. Its disks are sparse files in the run directory,
 * attached as virtio disks ({@code /dev/vda}, {@code /dev/vdb}...) that qemu throttles to
 * {@link Builder#diskIops} I/O operations per second each, so that the disk, not the emulated CPU, is
 * the bottleneck of 4k I/O. The init script is the UML guest's ({@code uml/init.sh}, with
 * {@code LVMQOS_GUEST_KIND=qemu}): the same stages, markers, parameters and payload environment
 * ({@link GuestEnv}), so a guest-side check runs in either kind of guest.
 *
 * <pre>{@code
 * GuestRun run = QemuGuest.builder()
 *         .disk("4G")
 *         .volumeGroup("lvmqos", 0)
 *         .thinPool("lvmqos", "thinpool", "2G")
 *         .payload("cat /sys/fs/cgroup/io.cost.model")
 *         .build()
 *         .run()
 *         .requireSuccess();
 * }</pre>
 */
public final class QemuGuest extends Guest {
    /** The guest's memory, as qemu's {@code -m} takes it. */
    public static final String DEFAULT_MEMORY = "2G";
    /** qemu's throttle of each disk, in I/O operations per second (reads and writes together). */
    public static final int DEFAULT_DISK_IOPS = 400;
    /** Software emulation is several times slower than UML: the driver's JVM opens its socket after about 25 s. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(10);
    /** Set to 1 to skip (not pass) every qemu guest test, on a machine that cannot run them. */
    public static final String SKIP_VARIABLE = "LVMQOS_SKIP_QEMU";
    /** The kernel to boot: an uncompressed ELF kernel (qemu boots it by its PVH entry point). */
    public static final String KERNEL_VARIABLE = "LVMQOS_QEMU_KERNEL";
    /** The initramfs {@code scripts/qemu.sh} made for that kernel: it reaches the 9p root and hands over to init. */
    public static final String INITRD_VARIABLE = "LVMQOS_QEMU_INITRD";
    /** The kernel's modules: the unpacked {@code lib/modules/<release>}, holding modules.dep. */
    public static final String MODULES_VARIABLE = "LVMQOS_QEMU_MODULES";
    /** System property: true copies the guest's console to standard output as it runs. */
    public static final String ECHO_PROPERTY = "lvmqos.qemu.echo";

    // The kernel's command line, and so init's environment: init knows which kind of guest it runs in.
    private static final String KIND_NAME = "qemu";
    private static final Kind KIND = new Kind(KIND_NAME, SKIP_VARIABLE, "qemu guest tests",
            "the guest acts on the host's /tmp and the run directory as the host user, and the test bed is proven"
                    + " as root only", "modprobe", "/dev/vd", "LVMQOS_INIT=", ECHO_PROPERTY);
    private static final String QEMU = "qemu-system-x86_64";
    private static final Pattern CONTROLLER = Pattern.compile("[a-z_]+");
    // Host paths that reach qemu's option strings (split at ',') and the kernel's command line (split
    // at blanks) unquoted.
    private static final Pattern SAFE_PATH = Pattern.compile("[A-Za-z0-9/._+-]+");

    /** A kernel to boot, its initramfs (made by scripts/qemu.sh for it) and its modules' directory. */
    public record Kernel(Path kernel, Path initrd, Path modules) {
        public Kernel {
            Objects.requireNonNull(kernel);
            Objects.requireNonNull(initrd);
            Objects.requireNonNull(modules);
        }
    }

    private final int cpus;
    private final int diskIops;
    private final Map<Integer, String> diskShapes;
    private final List<String> cgroupControllers;
    private final boolean systemd;
    private final Optional<Kernel> kernel;

    private QemuGuest(Builder builder, GuestBuilder.Settings settings) {
        super(KIND, settings);
        this.cpus = builder.cpus;
        this.diskIops = builder.diskIops;
        this.diskShapes = Map.copyOf(builder.diskShapes);
        this.cgroupControllers = List.copyOf(builder.cgroupControllers);
        this.systemd = builder.systemd;
        this.kernel = builder.kernel.or(QemuGuest::chosenKernel);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** qemu's monitor serves the guest's requests (a disk's throttle changed mid-run) while it runs. */
    @Override
    protected Alongside alongside(Path runDir, GuestProcess qemu) {
        Thread monitorRequests = QemuMonitorRequests.serve(GuestRunDir.outDir(runDir), qemu::type);
        return monitorRequests::interrupt;
    }

    /**
     * The console is qemu's serial port, muxed with its monitor on standard input: Ctrl-A b sends a
     * break, which with the key after it is a SysRq to the kernel (enabled for every key by
     * {@code sysrq_always_enabled}).
     */
    @Override
    protected boolean askForTaskDump(Path runDir, GuestProcess qemu) throws InterruptedException {
        for (String key : List.of("w", "m", "t")) {
            if (!qemu.type("\u0001b" + key)) {
                return false;
            }
            TimeUnit.MILLISECONDS.sleep(500);
        }
        return true;
    }

    /** Host processes of the guest that ran in {@code runDir} that are still alive: none, once {@link #run()} has ended. */
    public static List<ProcessHandle> processesOf(Path runDir) {
        return GuestProcess.processesWith(KIND.signature(runDir));
    }

    // --- the run ---

    @Override
    protected List<String> kernelProblems() {
        List<String> missing = new ArrayList<>();
        if (GuestHost.findOnPath(QEMU).isEmpty()) {
            missing.add(QEMU + " not found on PATH: apt-get install qemu-system-x86");
        }
        if (kernel.isEmpty()) {
            missing.add("no guest kernel: " + KERNEL_VARIABLE + ", " + INITRD_VARIABLE + " and " + MODULES_VARIABLE
                    + " are not all set; ./run-tests sets them (scripts/qemu.sh, lvmqos_pick_qemu), or set "
                    + SKIP_VARIABLE + "=1 to skip these tests explicitly");
        } else {
            Kernel k = kernel.get();
            for (Path file : List.of(k.kernel(), k.initrd())) {
                if (!Files.isRegularFile(file)) {
                    missing.add(file + " is not a file");
                } else if (!SAFE_PATH.matcher(file.toString()).matches()) {
                    missing.add(file + ": a path qemu's options can take unquoted is needed (" + SAFE_PATH + ")");
                }
            }
            if (!Files.isRegularFile(k.modules().resolve("modules.dep"))) {
                missing.add(k.modules() + " holds no modules.dep (the unpacked lib/modules/<release> of the kernel)");
            } else if (!SAFE_PATH.matcher(k.modules().toString()).matches()) {
                missing.add(k.modules() + ": a path a shell can take unquoted is needed (" + SAFE_PATH + ")");
            }
        }
        return missing;
    }

    /** What init reads from params.sh beside the common ones; the kernel was checked before. */
    @Override
    protected Map<String, String> kindParameters() {
        return Map.of("LVMQOS_CGROUP_CONTROLLERS", cgroupControllers.stream().map(c -> "+" + c)
                        .collect(Collectors.joining(" ")),
                MODULES_VARIABLE, kernel.orElseThrow().modules().toString());
    }

    /** The test's variables, after what the guest's checks learn of qemu's throttle. */
    @Override
    protected Map<String, String> payloadEnvironment() {
        Map<String, String> env = new LinkedHashMap<>();
        if (diskIops > 0) {
            env.put(GuestEnv.DISK_IOPS, Integer.toString(diskIops));
        }
        env.putAll(settings.environment());
        return env;
    }

    @Override
    protected List<String> command(Path runDir) {
        Kernel chosen = kernel.orElseThrow();
        List<String> command = new ArrayList<>(List.of(
                QEMU,
                // No KVM on these machines: software emulation, one CPU.
                "-accel", "tcg",
                "-m", settings.memory(),
                "-smp", Integer.toString(cpus),
                // The serial console on this process's standard input and output; no display, no network.
                "-nographic",
                "-nic", "none",
                // A reboot (a panic, with panic=-1) ends qemu rather than booting again.
                "-no-reboot",
                "-kernel", chosen.kernel().toString(),
                "-initrd", chosen.initrd().toString(),
                // The host's root, read-only: the JDK, lvm2, fio and the class path. remap keeps inode
                // numbers of the host's several file systems apart.
                "-virtfs", "local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap",
                // The host's /tmp, writable, as UML mounts it: a checkout under /tmp (CI) stays visible at its path.
                "-virtfs", "local,path=/tmp,mount_tag=tmp,security_model=none,multidevs=remap",
                // The run's out directory, writable, at its own path in the guest.
                "-virtfs", "local,path=" + GuestRunDir.outDir(runDir) + ",mount_tag=out,security_model=none"));
        for (int i = 0; i < settings.diskSizes().size(); i++) {
            // cache=none (O_DIRECT on the host) and qemu's throttle: the guest's disk behaves like a device
            // of a known, small capacity rather than the host's page cache.
            command.addAll(List.of("-drive", "file=" + GuestRunDir.diskImage(runDir, i)
                    + ",if=virtio,format=raw,cache=none,aio=threads"
                    + throttling(i)));
        }
        command.addAll(List.of("-append", String.join(" ",
                "console=ttyS0",
                // A panic reboots at once, which -no-reboot turns into qemu's end.
                "panic=-1",
                // Only the kernel's errors on the console: every character costs under emulation.
                "quiet",
                // Every SysRq key, so that a hung guest can be asked for its tasks (dumpGuestTasks).
                "sysrq_always_enabled",
                // Unknown key=value words reach the initramfs's /init, and from it init.sh, as environment.
                GuestEnv.GUEST_KIND + "=" + KIND_NAME,
                "LVMQOS_INIT=" + GuestRunDir.init(runDir),
                "LVMQOS_PARAMS=" + GuestRunDir.params(runDir),
                // the initramfs hands over to systemd, which runs init as a service (scripts/qemu.sh);
                // systemd's status lines only when something fails: every character costs under emulation
                "LVMQOS_SYSTEMD=" + (systemd ? 1 : 0),
                systemd ? "systemd.show_status=error" : "").strip()));
        return command;
    }

    /** The -drive options of disk {@code i}'s throttle: its own shape, or the IOPS every disk gets. */
    private String throttling(int i) {
        String shape = diskShapes.get(i);
        if (shape != null) {
            return Stream.of(shape.split(",")).map(option -> ",throttling." + option).collect(Collectors.joining());
        }
        return diskIops > 0 ? ",throttling.iops-total=" + diskIops : "";
    }

    @Override
    protected String program() {
        return QEMU;
    }

    @Override
    protected String bootAdvice() {
        return "lvmqos_pick_qemu (scripts/qemu.sh; ./run-tests calls it) chooses a kernel that a probe boot"
                + " proved on this machine; see console.log";
    }

    /** The kernel the host chose ({@value #KERNEL_VARIABLE} and the others), if it chose one. */
    private static Optional<Kernel> chosenKernel() {
        List<Optional<Path>> paths = Stream.of(KERNEL_VARIABLE, INITRD_VARIABLE, MODULES_VARIABLE)
                .map(variable -> Optional.ofNullable(System.getenv(variable)).filter(value -> !value.isBlank()).map(Path::of))
                .toList();
        if (paths.stream().anyMatch(Optional::isEmpty)) {
            return Optional.empty();
        }
        return Optional.of(new Kernel(paths.get(0).get(), paths.get(1).get(), paths.get(2).get()));
    }

    /** Settings of a qemu guest; every one but the payload has a default. */
    public static final class Builder extends GuestBuilder<Builder> {
        private int cpus = 1;
        private int diskIops = DEFAULT_DISK_IOPS;
        private final Map<Integer, String> diskShapes = new LinkedHashMap<>();
        private final Set<String> cgroupControllers = new LinkedHashSet<>(List.of("io", "memory"));
        private Optional<Kernel> kernel = Optional.empty();
        private boolean systemd;

        private Builder() {
            super("qemu", DEFAULT_MEMORY, DEFAULT_TIMEOUT, "at most " + GuestBuilder.MAX_DISKS + " disks");
        }

        @Override
        protected Builder self() {
            return this;
        }

        @Override
        public Builder copy() {
            Builder copy = copyInto(new Builder());
            copy.cpus = cpus;
            copy.diskIops = diskIops;
            copy.diskShapes.putAll(diskShapes);
            copy.cgroupControllers.clear();
            copy.cgroupControllers.addAll(cgroupControllers);
            copy.kernel = kernel;
            copy.systemd = systemd;
            return copy;
        }

        /**
         * systemd as the guest's PID 1, as on most production nodes: the root becomes an overlay of a
         * tmpfs over the host's read-only root, systemd (the host's, with the host's D-Bus) boots to a
         * target of the test bed's own, and init runs as its one service ({@code GuestEnv.initSystem()}
         * says so inside). The boot takes about 20 s longer under emulation.
         */
        public Builder systemd() {
            this.systemd = true;
            return this;
        }

        /** Boots this kernel rather than the host's choice ({@value #KERNEL_VARIABLE} and the others). */
        public Builder kernel(Kernel kernel) {
            this.kernel = Optional.of(kernel);
            return this;
        }

        /**
         * Emulated CPUs, one host thread each (qemu's multi-threaded TCG). Where the disk must be the
         * bottleneck under emulation, two keep the I/O of the pods from waiting on the guest's CPU.
         */
        public Builder cpus(int cpus) {
            if (cpus < 1 || cpus > 4) {
                throw new IllegalArgumentException("cpus " + cpus + " is out of range 1..4");
            }
            this.cpus = cpus;
            return this;
        }

        /**
         * qemu's throttle of every disk: at most {@code iops} reads and writes per second each
         * ({@code throttling.iops-total}); 0 for none. Default {@value #DEFAULT_DISK_IOPS}.
         */
        public Builder diskIops(int iops) {
            if (iops < 0) {
                throw new IllegalArgumentException("disk IOPS must be 0 (no throttle) or positive: " + iops);
            }
            this.diskIops = iops;
            return this;
        }

        /**
         * A throttle of its own for disk {@code index} in place of {@link #diskIops}: qemu's
         * {@code throttling.*} options without the prefix, comma-separated, such as
         * {@code iops-read=600,iops-write=200,bps-total=16777216} (reads and writes limited apart, a
         * byte rate that binds large transfers) or {@code iops-total=300,iops-total-max=1500,iops-total-max-length=2}
         * (a burst allowance): a disk unlike a constant.
         */
        public Builder diskShape(int index, String throttling) {
            if (!throttling.matches("[a-z-]+=[0-9]+(,[a-z-]+=[0-9]+)*")) {
                throw new IllegalArgumentException("a disk's throttle is key=number,... of qemu's throttling options: "
                        + throttling);
            }
            diskShapes.put(index, throttling);
            return this;
        }

        /**
         * Further cgroup v2 controllers init enables in the root's {@code cgroup.subtree_control}, beside
         * io and memory: {@code cpu}, {@code pids}, as kubelet enables them.
         */
        public Builder cgroupControllers(String... controllers) {
            for (String controller : controllers) {
                GuestHost.requireMatch(CONTROLLER, controller, "cgroup controller");
                cgroupControllers.add(controller);
            }
            return this;
        }

        @Override
        public QemuGuest build() {
            return new QemuGuest(this, settings());
        }
    }
}
