package io.lvmqos.server;

import io.lvmqos.metrics.MetricsAddress;
import io.lvmqos.volume.LvmNames;
import io.lvmqos.volume.NodeIds;
import io.lvmqos.volume.Quantity;
import io.lvmqos.volume.VolumeId;
import java.math.BigDecimal;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** The node plugin's command line. Serves Identity, Controller and Node on one unix socket. */
@Command(name = "lvmqos", mixinStandardHelpOptions = true, versionProvider = Main.BuildVersion.class,
        description = "CSI driver for local LVM volumes with per-volume I/O limits on the consuming pod.")
public final class Main implements Callable<Integer> {

    @Option(names = "--endpoint", description = "CSI endpoint, unix:///path/to/csi.sock (default: ${DEFAULT-VALUE})",
            defaultValue = "unix:///csi/csi.sock")
    String endpoint;

    @Option(names = "--node-id", required = true, description = "this node's name (Kubernetes node name)")
    String nodeId;

    @Option(names = "--driver-name", defaultValue = "lvmqos.csi.io", description = "CSI driver name (default: ${DEFAULT-VALUE})")
    String driverName;

    @Option(names = "--volume-group", description = "volume group to manage; repeat for several, the first is the default (default: lvmqos)")
    List<String> volumeGroups = new ArrayList<>();

    @Option(names = "--kubelet-dir", defaultValue = "/var/lib/kubelet", description = "kubelet's root directory (default: ${DEFAULT-VALUE})")
    Path kubeletDir;

    @Option(names = "--cgroup-root", defaultValue = "/sys/fs/cgroup", description = "where the host's cgroup tree is mounted (default: ${DEFAULT-VALUE})")
    Path cgroupRoot;

    @Option(names = "--watch-kubernetes", description = "watch this node's PersistentVolumes and their VolumeAttributesClasses"
            + " through the Kubernetes API (the pod's service account) and apply class changes here; ControllerModifyVolume"
            + " for another node's volume then answers OK and leaves it to that node")
    boolean watchKubernetes;

    @Option(names = "--wipe-bps", paramLabel = "RATE", description = "the most a deleted linear volume's zeroing may"
            + " write per second on average, a quantity such as 200Mi (at least 1Mi); it keeps the wipe from"
            + " starving the pods on the same disk (default: as fast as the disk goes)")
    String wipeBps;

    @Option(names = "--metrics-address", paramLabel = "[HOST]:PORT", description = "serve Prometheus metrics at"
            + " http://HOST:PORT/metrics; :PORT listens on every interface, e.g. :9808 (default: off)")
    String metricsAddress;

    @Option(names = "--probe-lvm-timeout", paramLabel = "SECONDS", defaultValue = "30", description = "Probe answers"
            + " not ready once lvm has left the background health check's vgs unanswered for this many seconds (a"
            + " volume group lock held for good, an lvm stuck in the kernel); a slower lvm leaves Probe ready"
            + " (default: ${DEFAULT-VALUE})")
    int probeLvmTimeoutSeconds;

    @Option(names = "--log-level", paramLabel = "LEVEL", defaultValue = "info", converter = Logging.LevelConverter.class,
            description = "the driver's own log level: error, warn, info, debug or trace (default: ${DEFAULT-VALUE});"
                    + " gRPC's and Netty's loggers stay at info whatever it is, so requests and their secrets are"
                    + " never dumped")
    Logging.Level logLevel;

    @Option(names = "--log-wire", description = "also log gRPC's and Netty's debug output, which holds every"
            + " request in hex and so the secrets of CreateVolume, NodeStageVolume and other calls; for debugging"
            + " the transport on a test node only (a warning is logged at start)")
    boolean logWire;

    public static void main(String[] args) {
        CommandLine commandLine = new CommandLine(new Main());
        commandLine.setParameterExceptionHandler((failure, arguments) -> {
            System.err.println("lvmqos: " + failure.getMessage() + " (see --help)");
            return 2;
        });
        System.exit(commandLine.execute(args));
    }

    @Override
    public Integer call() throws Exception {
        // before the first logger is made, which fixes its level
        Logging.configure(logLevel, logWire);
        if (logWire) {
            org.slf4j.LoggerFactory.getLogger(Main.class).warn(Logging.wireWarning());
        }
        DriverSettings settings = settings();
        Driver.run(settings);
        return 0;
    }

    DriverSettings settings() {
        List<String> groups = volumeGroups.isEmpty() ? List.of("lvmqos") : List.copyOf(volumeGroups);
        for (String group : groups) {
            if (!LvmNames.isValidName(group)) {
                throw new CommandLine.ParameterException(new CommandLine(this), "--volume-group " + group
                        + " is not a valid volume group name");
            }
            try {
                VolumeId.requireFitsInIds(group);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(new CommandLine(this), "--volume-group: " + e.getMessage());
            }
        }
        if (!NodeIds.isValid(nodeId)) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--node-id " + nodeId
                    + " is not a valid node name (lowercase letters, digits, '-' and '.')");
        }
        Path socket;
        try {
            socket = UnixSocketServer.socketPath(endpoint);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--endpoint: " + e.getMessage());
        }
        if (!kubeletDir.isAbsolute() || !cgroupRoot.isAbsolute()) {
            throw new CommandLine.ParameterException(new CommandLine(this),
                    "--kubelet-dir and --cgroup-root must be absolute paths");
        }
        Optional<InetSocketAddress> metrics;
        try {
            metrics = Optional.ofNullable(metricsAddress).map(MetricsAddress::parse);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--metrics-address: " + e.getMessage());
        }
        OptionalLong wipeRate = OptionalLong.empty();
        if (wipeBps != null) {
            wipeRate = Quantity.parse(wipeBps)
                    .filter(rate -> rate.compareTo(BigDecimal.valueOf(1L << 20)) >= 0)
                    .filter(rate -> rate.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) <= 0)
                    .map(rate -> OptionalLong.of(rate.longValue()))
                    .orElseThrow(() -> new CommandLine.ParameterException(new CommandLine(this), "--wipe-bps " + wipeBps
                            + " is not valid: expected bytes per second of at least 1Mi, such as 200Mi"));
        }
        if (probeLvmTimeoutSeconds < 1) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--probe-lvm-timeout "
                    + probeLvmTimeoutSeconds + " is not valid: expected a whole number of seconds of at least 1");
        }
        return new DriverSettings(socket, nodeId, driverName, groups, kubeletDir.normalize(), cgroupRoot.normalize(),
                watchKubernetes, BuildVersion.version(), metrics, wipeRate,
                java.time.Duration.ofSeconds(probeLvmTimeoutSeconds));
    }

    /** The version Maven put into the jar. */
    static final class BuildVersion implements CommandLine.IVersionProvider {
        static String version() {
            try (var in = Main.class.getResourceAsStream("/lvmqos-build.properties")) {
                java.util.Properties properties = new java.util.Properties();
                if (in != null) {
                    properties.load(in);
                }
                return properties.getProperty("version", "unknown");
            } catch (java.io.IOException e) {
                return "unknown";
            }
        }

        @Override
        public String[] getVersion() {
            return new String[] {"lvmqos " + version()};
        }
    }
}
