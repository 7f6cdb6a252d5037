package io.lvmqos.lvm;

import io.grpc.Context;
import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.Command;
import io.lvmqos.exec.CommandResult;
import io.lvmqos.exec.CommandRunner;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A thin pool as the kernel holds it, as opposed to what LVM's metadata records of it: its
 * transaction id ({@code dmsetup status} of the pool's {@code -tpool} device), the thin device ids
 * in its own metadata (thin_dump of a reserved metadata snapshot, without the mappings), and the
 * message that moves its transaction id. {@link Lvm} reads and moves these only to finish a pool
 * change that a killed lvm left half sent ({@link HalfSentPoolChange}); the changed-block reader
 * sends its metadata snapshot messages through here too.
 */
public final class ThinPoolKernel {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    /** {@code <start> <length> thin-pool <transaction id> <used>/<total metadata> ...} */
    private static final Pattern STATUS = Pattern.compile("^\\d+ \\d+ thin-pool (\\d+) .*");
    private static final Pattern DEVICE = Pattern.compile("^\\s*<device dev_id=\"(\\d+)\"");

    private final CommandRunner runner;
    private final Function<String, Path> programs;

    /** {@code programs} finds dmsetup and thin_dump when they are first needed. */
    public ThinPoolKernel(CommandRunner runner, Function<String, Path> programs) {
        this.runner = runner;
        this.programs = programs;
    }

    /** The transaction id the pool's kernel metadata holds. */
    long transactionId(String volumeGroup, String pool) {
        CommandResult result = ran(dmsetup("status", tpool(volumeGroup, pool)));
        return transactionOfStatus(result.stdout().strip());
    }

    /**
     * The thin device ids the pool's kernel metadata holds, read from a metadata snapshot reserved
     * for the read and released after it. The pool allows one snapshot at a time: when one is held
     * (a changed-block read in progress), this fails as UNAVAILABLE rather than read an older copy.
     */
    Set<Long> deviceIds(String volumeGroup, String pool) {
        // the driver's start releases snapshots an earlier run left held, without this class's turn:
        // a release between this reserve and the dump takes the snapshot away ("no current metadata snap")
        for (int attempt = 1; ; attempt++) {
            try {
                return deviceIdsOnce(volumeGroup, pool);
            } catch (DriverException e) {
                if (attempt == 3 || !String.valueOf(e.getMessage()).contains("no current metadata snap")) {
                    throw e;
                }
            }
        }
    }

    private Set<Long> deviceIdsOnce(String volumeGroup, String pool) {
        CommandResult reserved = message(volumeGroup, pool, "reserve_metadata_snap");
        if (!reserved.succeeded()) {
            throw DriverException.unavailable("cannot reserve the metadata snapshot of thin pool " + volumeGroup + "/"
                    + pool + " to read its thin devices (a changed-block read may hold it): " + reserved.diagnostic());
        }
        try {
            CommandResult dump = ran(Command.of(programs.apply("thin_dump"), TIMEOUT, "--metadata-snap",
                    "--skip-mappings", metadataDevice(volumeGroup, pool).toString()));
            return deviceIdsOfDump(dump.stdout());
        } finally {
            releaseMetadataSnapshot(volumeGroup, pool);
        }
    }

    /** Moves the kernel's transaction id; the kernel refuses unless it is {@code from} now. */
    void setTransactionId(String volumeGroup, String pool, long from, long to) {
        ran(messageCommand(volumeGroup, pool, "set_transaction_id " + from + " " + to));
    }

    /** Sends {@code message} to the pool's kernel target; the result as dmsetup gave it. */
    public CommandResult message(String volumeGroup, String pool, String message) {
        return runner.run(messageCommand(volumeGroup, pool, message));
    }

    /**
     * Drops the pool's metadata snapshot; false when there was none to drop, or the pool is not
     * active. Outside the caller's deadline: a read stopped by its deadline must still release.
     */
    public boolean releaseMetadataSnapshot(String volumeGroup, String pool) {
        Command release = messageCommand(volumeGroup, pool, "release_metadata_snap");
        try {
            return Context.ROOT.call(() -> runner.run(release)).succeeded();
        } catch (DriverException e) {
            throw e;
        } catch (Exception e) {
            throw DriverException.internal(release.display() + " failed", e);
        }
    }

    /** The pool's metadata LV, which thin-provisioning-tools read. */
    public static Path metadataDevice(String volumeGroup, String pool) {
        return Path.of("/dev/mapper", dmName(volumeGroup, pool + "_tmeta"));
    }

    /** The name device-mapper gives the pool's kernel target, as lvm's messages name it. */
    static String tpool(String volumeGroup, String pool) {
        return dmName(volumeGroup, pool) + "-tpool";
    }

    static long transactionOfStatus(String status) {
        Matcher matcher = STATUS.matcher(status);
        if (!matcher.matches()) {
            throw DriverException.internal("not a thin pool's status: \"" + status + "\"");
        }
        return Long.parseLong(matcher.group(1));
    }

    static Set<Long> deviceIdsOfDump(String xml) {
        Set<Long> ids = new TreeSet<>();
        for (String line : xml.lines().toList()) {
            Matcher matcher = DEVICE.matcher(line);
            if (matcher.find()) {
                ids.add(Long.parseLong(matcher.group(1)));
            }
        }
        return ids;
    }

    /** Device-mapper's name for an LV: VG and LV joined by '-', each '-' inside a name doubled. */
    private static String dmName(String volumeGroup, String lv) {
        return volumeGroup.replace("-", "--") + "-" + lv.replace("-", "--");
    }

    private Command messageCommand(String volumeGroup, String pool, String message) {
        return dmsetup("message", tpool(volumeGroup, pool), "0", message);
    }

    private Command dmsetup(String... arguments) {
        return Command.of(programs.apply("dmsetup"), TIMEOUT, List.of(arguments));
    }

    private CommandResult ran(Command command) {
        CommandResult result = runner.run(command);
        if (!result.succeeded()) {
            throw DriverException.internal(command.display() + " failed (exit " + result.exitCode() + "): "
                    + result.diagnostic());
        }
        return result;
    }
}
