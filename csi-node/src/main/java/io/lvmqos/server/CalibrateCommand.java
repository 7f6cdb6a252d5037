package io.lvmqos.server;

import io.lvmqos.cgroup.IoCost;
import io.lvmqos.device.BackingDisks;
import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.CommandRunner;
import io.lvmqos.guarantee.Calibration;
import io.lvmqos.guarantee.Calibrator;
import io.lvmqos.guarantee.DirectIoBench;
import io.lvmqos.lvm.Lvm;
import io.lvmqos.server.CommandLineParser.Option;
import io.lvmqos.server.CommandLineParser.UsageException;
import io.lvmqos.volume.LvmNames;
import io.lvmqos.volume.Quantity;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * {@code lvmqos calibrate}: measures the io.cost model of the disk under a volume group through an
 * LV of its own ({@link Calibrator}), prints it as the io.cost.model line, and records it in a tag
 * of the group, where the node plugin reads it at start. Run once per node and group, on an idle
 * disk; by hand, or by the chart's init step ({@code --if-uncalibrated --never-fail}).
 */
final class CalibrateCommand {

    static final String NAME = "calibrate";
    /** Exit codes: measured (or nothing to do), refused or failed, bad usage. */
    static final int OK = 0;
    static final int REFUSED = 1;
    static final int USAGE = 2;

    static final CommandLineParser COMMAND_LINE = new CommandLineParser("lvmqos calibrate",
            "Measures the io.cost model of the disk under a volume group, through an LV it makes in the group and"
                    + " removes afterwards, and records it in a tag of the group for the node plugin (--io-cost).",
            List.of(
            Option.value("--volume-group", "VG", "lvmqos", "the volume group whose disk is measured"),
            Option.value("--thin-pool", "POOL", "measure through a thin LV of this pool, written once in full"
                    + " first (default: a linear LV in the group's free space)"),
            Option.value("--size", "SIZE", "2Gi", "the LV's size, over which random I/O spreads; larger is closer"
                    + " to a disk full of data"),
            Option.value("--seconds", "N", "10", "how long each of the six workloads runs (1 to 300)"),
            Option.value("--sequential-block", "SIZE", "16Mi", "the size of each transfer measuring bytes per"
                    + " second (4Ki to 128Mi, a multiple of 4Ki)"),
            Option.value("--cgroup-root", "DIR", "/sys/fs/cgroup", "where the host's cgroup v2 tree is mounted"),
            Option.flag("--dry-run", "measure and print, record nothing"),
            Option.flag("--if-uncalibrated", "do nothing when the group already holds a calibration"),
            Option.flag("--never-fail", "exit 0 even when the measurement is refused or fails (it is still printed):"
                    + " for an init step, which must not keep the plugin from starting")));

    private CalibrateCommand() {
    }

    /** Runs the command line after {@code calibrate}; answers the process's exit code. */
    static int run(String[] args, PrintStream out, PrintStream err) {
        CommandLineParser.Run given;
        Request request;
        try {
            switch (COMMAND_LINE.parse(args)) {
                case CommandLineParser.Help help -> {
                    out.print(COMMAND_LINE.help());
                    return OK;
                }
                case CommandLineParser.Version version -> {
                    out.println("lvmqos " + Main.BuildVersion.version());
                    return OK;
                }
                case CommandLineParser.Run run -> given = run;
            }
            request = request(given);
        } catch (UsageException e) {
            err.println("lvmqos calibrate: " + e.getMessage() + " (see lvmqos calibrate --help)");
            return USAGE;
        }
        boolean neverFail = given.flag("--never-fail");
        try {
            return calibrate(request, out);
        } catch (DriverException e) {
            err.println("lvmqos calibrate: " + e.getMessage());
        } catch (RuntimeException e) {
            err.println("lvmqos calibrate: failed: " + e);
            e.printStackTrace(err);
        }
        if (neverFail) {
            err.println("lvmqos calibrate: --never-fail: exiting 0; the plugin keeps what the group held before");
            return OK;
        }
        return REFUSED;
    }

    /** A parsed command line. */
    record Request(Calibrator.Request measure, Path cgroupRoot, boolean dryRun, boolean ifUncalibrated) {
    }

    private static int calibrate(Request request, PrintStream out) {
        CommandRunner runner = new CommandRunner();
        Lvm lvm = Lvm.onThisHost(runner);
        String group = request.measure().volumeGroup();
        List<String> tags = lvm.volumeGroupTags(group);
        Optional<Calibration> recorded = Calibration.fromTags(tags);
        if (request.ifUncalibrated() && recorded.isPresent()) {
            out.println("volume group " + group + " holds a calibration from " + recorded.get().at() + ": "
                    + recorded.get().model().settings() + " (--if-uncalibrated: nothing to do)");
            return OK;
        }
        Path sys = Path.of("/sys");
        Calibrator calibrator = new Calibrator(lvm, new BackingDisks(sys), new IoCost(request.cgroupRoot()), sys,
                new DirectIoBench(), Clock.systemUTC(), line -> {
                    out.println(line);
                    out.flush();
                });
        DeviceNumber disk = calibrator.diskOf(group);
        out.println("calibrating disk " + disk + " under volume group " + group + ": 6 workloads of "
                + request.measure().perWorkload().toSeconds() + " s; nothing else should use the disk meanwhile");
        Calibration calibration = calibrator.measure(request.measure(), disk);
        out.println();
        out.println(disk + " " + calibration.model().settings());
        if (request.dryRun()) {
            out.println("--dry-run: not recorded");
            return OK;
        }
        List<String> old = tags.stream().filter(Calibration::isCalibrationTag).toList();
        lvm.replaceVolumeGroupTags(group, old, List.of(calibration.tag()));
        out.println("recorded in volume group " + group + " as tag " + calibration.tag() + "; the node plugin uses it"
                + " from its next start when --io-cost=" + group + " is given without --io-cost-model");
        return OK;
    }

    private static Request request(CommandLineParser.Run given) throws UsageException {
        String group = given.value("--volume-group").orElseThrow();
        if (!LvmNames.isValidName(group)) {
            throw new UsageException("--volume-group " + group + " is not a valid volume group name");
        }
        Optional<String> pool = given.value("--thin-pool");
        if (pool.isPresent() && !LvmNames.isValidName(pool.get())) {
            throw new UsageException("--thin-pool " + pool.get() + " is not a valid LV name");
        }
        long size = bytes(given, "--size", 64L << 20, 1L << 40);
        if (size % (1 << 20) != 0) {
            throw new UsageException("--size " + given.value("--size").orElseThrow() + " is not a whole number of MiB");
        }
        long block = bytes(given, "--sequential-block", 4096, 128L << 20);
        if (block % 4096 != 0 || block > size) {
            throw new UsageException("--sequential-block " + given.value("--sequential-block").orElseThrow()
                    + " is not a multiple of 4Ki no larger than --size");
        }
        String secondsText = given.value("--seconds").orElseThrow();
        int seconds;
        try {
            seconds = Integer.parseInt(secondsText);
        } catch (NumberFormatException e) {
            seconds = 0;
        }
        if (seconds < 1 || seconds > 300) {
            throw new UsageException("--seconds " + secondsText + " is not valid: expected a whole number from 1 to 300");
        }
        Path cgroupRoot = Main.absolutePath(given, "--cgroup-root");
        return new Request(new Calibrator.Request(group, pool, size, Duration.ofSeconds(seconds), (int) block),
                cgroupRoot, given.flag("--dry-run"), given.flag("--if-uncalibrated"));
    }

    private static long bytes(CommandLineParser.Run given, String option, long min, long max) throws UsageException {
        String text = given.value(option).orElseThrow();
        return Quantity.parse(text)
                .filter(v -> v.compareTo(BigDecimal.valueOf(min)) >= 0 && v.compareTo(BigDecimal.valueOf(max)) <= 0)
                .filter(v -> v.stripTrailingZeros().scale() <= 0)
                .map(BigDecimal::longValueExact)
                .orElseThrow(() -> new UsageException(option + " " + text + " is not valid: expected a size from " + min
                        + " to " + max + " bytes, such as 2Gi"));
    }
}
