package io.lvmqos.e2e.uml;

import io.lvmqos.e2e.uml.UmlGuestException.Failure;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * A user-mode-Linux guest for real-kernel tests: a real kernel with device-mapper, LVM and cgroup
 * v2 io, run as a host process. Which kernel is the host's choice: {@value #KERNEL_VARIABLE} and
 * {@value #MODULES_VARIABLE}, which {@code scripts/lib.sh} sets to one that a probe boot proved on this
 * machine ({@code ./run-tests} does), else {@code linux.uml} on PATH and its package's modules. The guest's root is the host's {@code /} read-only, so the host's JDK,
 * lvm2 and the test classpath are all there; its disks are sparse files in a fresh run directory.
 *
 * <p>{@link #run()} boots the guest; the init script (resource {@code uml/init.sh}) loads the
 * device-mapper modules, configures LVM, creates the volume groups, mounts the cgroup hierarchy, runs
 * the payload with {@code sh -c} and halts. Every way that can go wrong is a {@link UmlGuestException}
 * saying which part failed; a payload that ran comes back as a {@link GuestRun} with its exit code.
 *
 * <pre>{@code
 * GuestRun run = UmlGuest.builder()
 *         .disk("4G")
 *         .volumeGroup("lvmqos", 0)
 *         .thinPool("lvmqos", "thinpool", "2G")
 *         .payload("lvm lvs")
 *         .build()
 *         .run()
 *         .requireSuccess();
 * }</pre>
 */
public final class UmlGuest extends Guest {
    public static final String DEFAULT_MEMORY = "1536M";
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(5);
    public static final String DEFAULT_CGROUP_ROOT = "/sys/fs/cgroup";
    /** Set to 1 to skip (not pass) every guest test, on a machine that cannot run them. */
    public static final String SKIP_VARIABLE = "LVMQOS_SKIP_UML";
    /** The UML kernel to boot; unset, {@code linux.uml} on PATH. */
    public static final String KERNEL_VARIABLE = "LVMQOS_UML";
    /** That kernel's module directory (holding modules.dep, or a directory per release). */
    public static final String MODULES_VARIABLE = "LVMQOS_UML_MODULES";
    /** System property: where run directories go. */
    public static final String RUN_DIR_PROPERTY = GuestRunDir.RUN_DIR_PROPERTY;
    /** System property: true copies the guest's console to standard output as it runs. */
    public static final String ECHO_PROPERTY = "lvmqos.uml.echo";

    static final int CONSOLE_TAIL_LINES = 60;

    private static final Kind KIND = new Kind("uml", SKIP_VARIABLE, "real-kernel guest tests",
            "the guest's root acts on the host's files (hostfs) with the host user's rights, so only a root"
                    + " host user gives it a real root", "insmod", "/dev/ubd", "init=", ECHO_PROPERTY);

    private static final Pattern LVM_NAME = Pattern.compile("[A-Za-z0-9+_.][A-Za-z0-9+_.-]*");
    private static final Pattern LVM_SIZE = Pattern.compile("\\d+(\\.\\d+)?[bBsSkKmMgGtTpPeE]?|\\d+%(VG|FREE|PVS)");

    /** A volume group init creates on the given disks (indexes into the builder's disks). */
    public record VolumeGroup(String name, List<Integer> disks, Optional<ThinPool> thinPool) {
        public VolumeGroup {
            GuestHost.requireMatch(LVM_NAME, name, "volume group name");
            disks = List.copyOf(disks);
            Objects.requireNonNull(thinPool);
        }
    }

    /** A thin pool: {@code size} is an lvcreate size ({@code 2G}) or extents share ({@code 90%FREE}). */
    public record ThinPool(String name, String size) {
        public ThinPool {
            GuestHost.requireMatch(LVM_NAME, name, "thin pool name");
            GuestHost.requireMatch(LVM_SIZE, size, "thin pool size");
        }
    }

    /** A UML kernel and its module directory (the one holding modules.dep, or its parent). */
    public record Kernel(Path binary, Path modules) {
        public Kernel {
            Objects.requireNonNull(binary);
            Objects.requireNonNull(modules);
        }
    }

    private final Optional<Kernel> kernel;
    private final Optional<Path> runDirectory;
    private final Optional<Path> reusedDisks;

    private UmlGuest(Builder builder, GuestBuilder.Settings settings) {
        super(KIND, settings);
        this.kernel = builder.kernel.or(UmlGuest::chosenKernel);
        this.runDirectory = builder.runDirectory;
        this.reusedDisks = builder.reusedDisks;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** What the host saw of a guest whose power it cut. */
    public record PowerCut(Path runDir, Duration wallTime, List<String> console) {
    }

    /**
     * Boots the guest and, the moment its payload creates {@code out/<marker>}, kills every host
     * process of it with SIGKILL: the guest's page cache, its processes and whatever its lvm had not
     * written are lost, as in a power cut; what it had written to its disks is in the image files,
     * which are kept. The guest sees out/ through hostfs, whose writes reach the host file at once.
     *
     * @throws UmlGuestException (or the failure {@link GuestVerdict} reads) if the guest ended, or
     *     outran the timeout, before the marker appeared
     */
    public PowerCut runUntilPowerCut(String marker) {
        Path runDir = prepareRun();
        Path markerFile = GuestRunDir.outDir(runDir).resolve(marker);
        long started = System.nanoTime();
        long deadline = started + settings.timeout().toNanos();
        try (GuestProcess uml = start(runDir)) {
            while (!Files.exists(markerFile)) {
                boolean exited = uml.awaitExit(Duration.ofMillis(10));
                if (exited || System.nanoTime() > deadline) {
                    uml.close();
                    Duration wallTime = Duration.ofNanos(System.nanoTime() - started);
                    // a failed stage or payload is reported as run() would; a payload that passed is not the point
                    GuestVerdict.of(new GuestVerdict.Ending(runDir, uml.console(), exited, exited ? uml.exitValue() : -1,
                            wallTime, settings.timeout()), program(), "");
                    throw new UmlGuestException(Failure.PAYLOAD_FAILED, "the payload ended without creating "
                            + markerFile + ", so the guest's power was never cut", Optional.of(runDir),
                            tail(String.join("\n", uml.console()), CONSOLE_TAIL_LINES));
                }
            }
            uml.killTree();
            return new PowerCut(runDir, Duration.ofNanos(System.nanoTime() - started), uml.console());
        }
    }

    @Override
    protected Path runDirectory() {
        return runDirectory.map(GuestRunDir::use).orElseGet(super::runDirectory);
    }

    @Override
    protected boolean ownsDisks() {
        return reusedDisks.isEmpty();
    }

    /**
     * Through UML's management console: sysrq w, m, t (t last, because this UML kernel can stop
     * answering partway through it). Without {@code uml_mconsole} (Debian's uml-utilities) there is
     * simply no dump.
     */
    @Override
    protected boolean askForTaskDump(Path runDir, GuestProcess guest) throws IOException, InterruptedException {
        for (String key : List.of("w", "m", "t")) {
            if (!mconsole(mconsoleSocket(runDir), "sysrq", key)) {
                return false;
            }
        }
        return true;
    }

    /** Any request wakes the guest's interrupt handling, which also flushes its console. */
    @Override
    protected void wakeConsole(Path runDir) throws IOException, InterruptedException {
        mconsole(mconsoleSocket(runDir), "version");
    }

    private static Path mconsoleSocket(Path runDir) {
        return runDir.resolve("uml").resolve("guest").resolve("mconsole");
    }

    /** Runs one uml_mconsole command; false if it did not answer within 10 seconds. */
    private static boolean mconsole(Path socket, String... command) throws IOException, InterruptedException {
        List<String> argv = new ArrayList<>(List.of("uml_mconsole", socket.toString()));
        argv.addAll(List.of(command));
        Process mconsole = new ProcessBuilder(argv).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!mconsole.waitFor(10, TimeUnit.SECONDS)) {
            mconsole.destroyForcibly();
            return false;
        }
        return true;
    }

    /**
     * Host processes of the guest that ran in {@code runDir} that are still alive: none, once
     * {@link #run()} has returned or thrown.
     */
    public static List<ProcessHandle> processesOf(Path runDir) {
        return GuestProcess.processesWith(KIND.signature(runDir));
    }

    /** Quotes one word for a POSIX shell: {@code it's} becomes {@code 'it'\''s'}. */
    public static String shellQuote(String word) {
        if (word.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("a shell word cannot hold a NUL character");
        }
        return "'" + word.replace("'", "'\\''") + "'";
    }

    /** The last {@code lines} lines of {@code text}. */
    public static String tail(String text, int lines) {
        List<String> all = text.lines().toList();
        return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    }

    // --- the run ---

    @Override
    protected List<String> kernelProblems() {
        List<String> missing = new ArrayList<>();
        if (kernel.isPresent() && !Files.isExecutable(kernel.get().binary())) {
            missing.add("the kernel " + kernel.get().binary() + " is not an executable file");
        } else if (kernel.isEmpty() && GuestHost.findOnPath("linux.uml").isEmpty()) {
            missing.add("linux.uml not found on PATH: apt-get install user-mode-linux, or run ./run-tests, which"
                    + " chooses a kernel that boots on this machine");
        }
        if (System.getenv(KERNEL_VARIABLE) != null && System.getenv(MODULES_VARIABLE) == null) {
            missing.add(KERNEL_VARIABLE + " is set but " + MODULES_VARIABLE + " is not: name the kernel's module"
                    + " directory too");
        }
        return missing;
    }

    /** What init reads from params.sh beside the common ones. */
    @Override
    protected Map<String, String> kindParameters() {
        return Map.of(MODULES_VARIABLE, kernel.map(k -> k.modules().toString()).orElse(""),
                "LVMQOS_REUSE_DISKS", reusedDisks.isPresent() ? "1" : "");
    }

    @Override
    protected List<String> command(Path runDir) {
        List<String> command = new ArrayList<>(HostCpuPin.prefix());
        command.addAll(List.of(
                program(),
                "mem=" + settings.memory(),
                "rootfstype=hostfs",
                "rootflags=/",
                "ro",
                // UML 6.16 and later can run guest processes under a seccomp filter instead of ptrace:
                // a guest system call then costs one signal instead of several ptrace stops. Measured on
                // a 2-core AMD EPYC host with kernel 7.2.7, java -version took 1.2 s with ptrace and 0.55 s
                // with seccomp. "auto" keeps ptrace where the host refuses the filter; kernels older than
                // 6.16 do not know the key and pass it to init as an unused environment variable.
                "seccomp=auto",
                "init=" + GuestRunDir.init(runDir)));
        for (int i = 0; i < settings.diskSizes().size(); i++) {
            command.add("ubd" + i + "=" + GuestRunDir.diskImage(reusedDisks.orElse(runDir), i));
        }
        command.addAll(List.of(
                // The guest's first console on this process's stdin and stdout; no other consoles.
                "con=null",
                "con0=fd:0,fd:1",
                // UML's pid file and management socket go in the run directory, not in ~/.uml, where a
                // killed guest would leave them behind.
                "uml_dir=" + runDir.resolve("uml"),
                "umid=guest",
                // An unknown key=value of the kernel command line reaches init as an environment variable.
                "LVMQOS_PARAMS=" + GuestRunDir.params(runDir)));
        return command;
    }

    /** The kernel the host chose ({@value #KERNEL_VARIABLE}), if it chose one. */
    private static Optional<Kernel> chosenKernel() {
        return Optional.ofNullable(System.getenv(KERNEL_VARIABLE)).filter(binary -> !binary.isBlank())
                .map(binary -> new Kernel(Path.of(binary),
                        Path.of(Objects.requireNonNullElse(System.getenv(MODULES_VARIABLE), ""))));
    }

    @Override
    protected String program() {
        return kernel.map(k -> k.binary().toString()).orElse("linux.uml");
    }

    @Override
    protected String bootAdvice() {
        return "./run-tests (scripts/lib.sh) chooses a kernel that boots on this machine, or set "
                + KERNEL_VARIABLE + " and " + MODULES_VARIABLE;
    }

    /** Settings of a UML guest; every one but the payload has a default. */
    public static final class Builder extends GuestBuilder<Builder> {
        private Optional<Kernel> kernel = Optional.empty();
        private Optional<Path> runDirectory = Optional.empty();
        private Optional<Path> reusedDisks = Optional.empty();

        private Builder() {
            super("guest", DEFAULT_MEMORY, DEFAULT_TIMEOUT, "UML has at most " + GuestBuilder.MAX_DISKS + " ubd disks");
        }

        @Override
        protected Builder self() {
            return this;
        }

        @Override
        public Builder copy() {
            Builder copy = copyInto(new Builder());
            copy.kernel = kernel;
            copy.runDirectory = runDirectory;
            copy.reusedDisks = reusedDisks;
            return copy;
        }

        /** Boots this kernel rather than the host's choice ({@value #KERNEL_VARIABLE}, else PATH). */
        public Builder kernel(Kernel kernel) {
            this.kernel = Optional.of(kernel);
            return this;
        }

        /**
         * Runs in this directory (made if missing) instead of a new one under {@value #RUN_DIR_PROPERTY}: for a
         * caller that keeps files of its own beside the guest's, as ./demo keeps its build log.
         */
        public Builder runDirectory(Path dir) {
            this.runDirectory = Optional.of(dir);
            return this;
        }

        /**
         * Boots on the disk images of an earlier run (one with {@link #keepDisks}) in that run's
         * directory, as a node boots again on its disks: init creates no volume group, thin pool or
         * PV and activates nothing, it only checks that lvm sees the declared volume groups. The
         * disks and volume groups declared here must be the earlier run's; the images are left where
         * they are, for the caller to delete.
         */
        public Builder reuseDisks(Path earlierRunDirectory) {
            this.reusedDisks = Optional.of(earlierRunDirectory.toAbsolutePath().normalize());
            return this;
        }

        @Override
        public UmlGuest build() {
            return new UmlGuest(this, settings());
        }
    }
}
