package io.lvmqos.server;

import io.lvmqos.metrics.MetricsAddress;
import io.lvmqos.server.CommandLineParser.Option;
import io.lvmqos.server.CommandLineParser.UsageException;
import io.lvmqos.volume.LvmNames;
import io.lvmqos.volume.NodeIds;
import io.lvmqos.volume.Quantity;
import io.lvmqos.volume.VolumeId;
import java.io.IOException;
import java.math.BigDecimal;
import java.net.InetSocketAddress;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Properties;

/** The node plugin's command line. Serves Identity, Controller and Node on one unix socket. */
public final class Main {

    static final CommandLineParser COMMAND_LINE = new CommandLineParser("lvmqos",
            "CSI driver for local LVM volumes with per-volume I/O limits on the consuming pod. `lvmqos calibrate"
                    + " --help` tells how to measure a disk's io.cost model for ioWeight and floors.", List.of(
            Option.value("--endpoint", "URL", "unix:///csi/csi.sock", "CSI endpoint, unix:///path/to/csi.sock"),
            Option.value("--node-id", "NAME", "this node's name (Kubernetes node name); required"),
            Option.value("--driver-name", "NAME", "lvmqos.csi.io", "CSI driver name"),
            Option.repeatable("--volume-group", "VG", "volume group to manage; repeat for several, the first is the"
                    + " default (default: lvmqos)"),
            Option.value("--kubelet-dir", "DIR", "/var/lib/kubelet", "kubelet's root directory"),
            Option.value("--cgroup-root", "DIR", "/sys/fs/cgroup", "where the host's cgroup tree is mounted"),
            Option.flag("--watch-kubernetes", "watch this node's PersistentVolumes and their"
                    + " VolumeAttributesClasses through the Kubernetes API (the pod's service account) and apply class"
                    + " changes here; ControllerModifyVolume for another node's volume then answers OK and leaves it"
                    + " to that node"),
            Option.value("--wipe-bps", "RATE", "the most a deleted linear volume's zeroing may write per second on"
                    + " average, a quantity such as 200Mi (at least 1Mi); it keeps the wipe from starving the pods on"
                    + " the same disk (default: as fast as the disk goes)"),
            Option.value("--metrics-address", "[HOST]:PORT", "serve Prometheus metrics at http://HOST:PORT/metrics;"
                    + " :PORT listens on every interface, e.g. :9808 (default: off)"),
            Option.value("--probe-lvm-timeout", "SECONDS", "30", "Probe answers not ready once lvm has left the"
                    + " background health check's vgs unanswered for this many seconds (a volume group lock held for"
                    + " good, an lvm stuck in the kernel); a slower lvm leaves Probe ready"),
            Option.repeatable("--io-cost", "VG", "enable io.cost on the disks under this volume group at start, so"
                    + " that StorageClasses may give its volumes ioWeight and floors; repeat for several. io.cost governs"
                    + " the whole disk, every workload on it (default: off)"),
            Option.repeatable("--io-cost-model", "VG:MODEL", "the io.cost.model settings for that group's disks, such"
                    + " as lvmqos:ctrl=user model=linear rbps=200000000 rseqiops=380 rrandiops=380 wbps=200000000"
                    + " wseqiops=380 wrandiops=380 (default: the model lvmqos calibrate recorded in the group's tag;"
                    + " with neither, io.cost stays off there and its weights and floors are refused)"),
            Option.repeatable("--io-cost-qos", "VG:QOS", "the io.cost.qos settings for that group's disks (default: "
                    + IoCostSettings.DEFAULT_QOS + ")"),
            Option.repeatable("--io-capacity", "VG:iops=N,bps=RATE", "a check of what that group's disk does: floors"
                    + " (iopsFloor, bpsFloor and their per-direction forms) are admitted against its io.cost model"
                    + " (random IOPS and sequential bytes/s at the lowest vrate), and a figure given here more than 10%"
                    + " from the model's makes the group refuse guarantees (default: the model alone)"),
            Option.value("--lvm-shell-dir", "DIR", "/tmp", "a writable directory of the driver's own where the"
                    + " configuration of its long-lived lvm processes (lvm's shell mode, one command at a time) is made"),
            Option.flag("--fork-lvm", "run every lvm command as a process of its own instead of in long-lived lvm"
                    + " shells"),
            Option.value("--log-level", "LEVEL", "info", "the driver's own log level: error, warn, info, debug or"
                    + " trace; gRPC's and Netty's loggers stay at info whatever it is, so requests and their secrets"
                    + " are never dumped"),
            Option.flag("--log-wire", "also log gRPC's and Netty's debug output, which holds every request in hex"
                    + " and so the secrets of CreateVolume, NodeStageVolume and other calls; for debugging the"
                    + " transport on a test node only (a warning is logged at start)")));

    private Main() {
    }

    public static void main(String[] args) {
        System.exit(run(args));
    }

    private static int run(String[] args) {
        if (args.length > 0 && args[0].equals(CalibrateCommand.NAME)) {
            // lvm's and the driver's own log lines would interleave with the measurement's progress
            Logging.configure(Logging.Level.parse("warn"), false);
            return CalibrateCommand.run(java.util.Arrays.copyOfRange(args, 1, args.length), System.out, System.err);
        }
        try {
            switch (COMMAND_LINE.parse(args)) {
                case CommandLineParser.Help help -> {
                    System.out.print(COMMAND_LINE.help());
                    return 0;
                }
                case CommandLineParser.Version version -> {
                    System.out.println("lvmqos " + BuildVersion.version());
                    return 0;
                }
                case CommandLineParser.Run given -> {
                    // before the first logger is made, which fixes its level
                    boolean wire = given.flag("--log-wire");
                    Logging.configure(logLevel(given), wire);
                    if (wire) {
                        org.slf4j.LoggerFactory.getLogger(Main.class).warn(Logging.wireWarning());
                    }
                    DriverSettings settings = settings(given);
                    Driver.run(settings);
                    return 0;
                }
            }
        } catch (UsageException e) {
            System.err.println("lvmqos: " + e.getMessage() + " (see --help)");
            return 2;
        } catch (Exception e) {
            org.slf4j.LoggerFactory.getLogger(Main.class).error("lvmqos stopped", e);
            return 1;
        }
    }

    /** The option names the plugin accepts, --help and --version aside: the deploy tests check the DaemonSet's. */
    public static List<String> optionNames() {
        return COMMAND_LINE.optionNames();
    }

    /** The option names {@code lvmqos calibrate} accepts: the deploy tests check the chart's init step's. */
    public static List<String> calibrateOptionNames() {
        return CalibrateCommand.COMMAND_LINE.optionNames();
    }

    /**
     * The settings a command line gives, validated as at start; for tests of the shipped arguments.
     *
     * @throws IllegalArgumentException with the message the plugin would exit with
     */
    public static DriverSettings settings(String... args) {
        try {
            if (!(COMMAND_LINE.parse(args) instanceof CommandLineParser.Run given)) {
                throw new UsageException("asks for help or the version, not a run");
            }
            logLevel(given);
            return settings(given);
        } catch (UsageException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    private static Logging.Level logLevel(CommandLineParser.Run given) throws UsageException {
        String level = given.value("--log-level").orElseThrow();
        try {
            return Logging.Level.parse(level);
        } catch (IllegalArgumentException e) {
            throw new UsageException("--log-level: " + e.getMessage());
        }
    }

    private static DriverSettings settings(CommandLineParser.Run given) throws UsageException {
        String nodeId = given.value("--node-id").orElseThrow(() -> new UsageException(
                "missing required option --node-id=NAME, this node's name"));
        List<String> groups = given.values("--volume-group").isEmpty() ? List.of("lvmqos")
                : List.copyOf(given.values("--volume-group"));
        for (String group : groups) {
            if (!LvmNames.isValidName(group)) {
                throw new UsageException("--volume-group " + group + " is not a valid volume group name");
            }
            try {
                VolumeId.requireFitsInIds(group);
            } catch (IllegalArgumentException e) {
                throw new UsageException("--volume-group: " + e.getMessage());
            }
        }
        if (!NodeIds.isValid(nodeId)) {
            throw new UsageException("--node-id " + nodeId
                    + " is not a valid node name (lowercase letters, digits, '-' and '.')");
        }
        Path socket;
        try {
            socket = UnixSocketServer.socketPath(given.value("--endpoint").orElseThrow());
        } catch (IllegalArgumentException e) {
            throw new UsageException("--endpoint: " + e.getMessage());
        }
        Path kubeletDir = absolutePath(given, "--kubelet-dir");
        Path cgroupRoot = absolutePath(given, "--cgroup-root");
        Optional<InetSocketAddress> metrics;
        try {
            metrics = given.value("--metrics-address").map(MetricsAddress::parse);
        } catch (IllegalArgumentException e) {
            throw new UsageException("--metrics-address: " + e.getMessage());
        }
        OptionalLong wipeRate = OptionalLong.empty();
        Optional<String> wipeBps = given.value("--wipe-bps");
        if (wipeBps.isPresent()) {
            wipeRate = Quantity.parse(wipeBps.get())
                    .filter(rate -> rate.compareTo(BigDecimal.valueOf(1L << 20)) >= 0)
                    .filter(rate -> rate.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) <= 0)
                    .map(rate -> OptionalLong.of(rate.longValue()))
                    .orElseThrow(() -> new UsageException("--wipe-bps " + wipeBps.get()
                            + " is not valid: expected bytes per second of at least 1Mi, such as 200Mi"));
        }
        String timeout = given.value("--probe-lvm-timeout").orElseThrow();
        int probeLvmTimeoutSeconds;
        try {
            probeLvmTimeoutSeconds = Integer.parseInt(timeout);
        } catch (NumberFormatException e) {
            probeLvmTimeoutSeconds = 0;
        }
        if (probeLvmTimeoutSeconds < 1) {
            throw new UsageException("--probe-lvm-timeout " + timeout
                    + " is not valid: expected a whole number of seconds of at least 1");
        }
        IoCostSettings ioCost = IoCostSettings.parse(groups, given.values("--io-cost"), given.values("--io-cost-model"),
                given.values("--io-cost-qos"), given.values("--io-capacity"));
        Optional<Path> lvmShellDir = given.flag("--fork-lvm") ? Optional.empty()
                : Optional.of(absolutePath(given, "--lvm-shell-dir").normalize());
        return new DriverSettings(socket, nodeId, given.value("--driver-name").orElseThrow(), groups,
                kubeletDir.normalize(), cgroupRoot.normalize(), given.flag("--watch-kubernetes"),
                BuildVersion.version(), metrics, wipeRate, Duration.ofSeconds(probeLvmTimeoutSeconds), ioCost,
                lvmShellDir);
    }

    static Path absolutePath(CommandLineParser.Run given, String name) throws UsageException {
        String value = given.value(name).orElseThrow();
        try {
            Path path = Path.of(value);
            if (path.isAbsolute()) {
                return path;
            }
        } catch (InvalidPathException e) {
            // refused below with the same message
        }
        throw new UsageException(name + " " + value + " is not valid: expected an absolute path");
    }

    /** The version Maven put into the jar. */
    static final class BuildVersion {
        private BuildVersion() {
        }

        static String version() {
            try (var in = Main.class.getResourceAsStream("/lvmqos-build.properties")) {
                Properties properties = new Properties();
                if (in != null) {
                    properties.load(in);
                }
                return properties.getProperty("version", "unknown");
            } catch (IOException e) {
                return "unknown";
            }
        }
    }
}
