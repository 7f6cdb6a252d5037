package io.lvmqos.metadata;

import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.Command;
import io.lvmqos.exec.CommandResult;
import io.lvmqos.exec.CommandRunner;
import io.lvmqos.lvm.ThinPoolKernel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * A thin pool's metadata, read from outside the kernel: the pool's metadata snapshot reserved and
 * released with {@code dmsetup message}, and the mappings read from that frozen copy with
 * thin-provisioning-tools' {@code thin_delta} and {@code thin_dump}. While the pool is live its
 * metadata changes under any reader; the reserved snapshot is a consistent copy that the kernel
 * keeps until it is released, and only one can exist per pool.
 */
public final class ThinPoolMetadata {

    /** Reading a large pool's mappings can take minutes; the caller's deadline shortens it. */
    private static final Duration READ_TIMEOUT = Duration.ofMinutes(30);

    private final CommandRunner runner;
    private final Function<String, Path> programs;
    private final ThinPoolKernel kernel;

    /** {@code programs} finds dmsetup, thin_delta and thin_dump when they are first needed. */
    public ThinPoolMetadata(CommandRunner runner, Function<String, Path> programs) {
        this.runner = runner;
        this.programs = programs;
        this.kernel = new ThinPoolKernel(runner, programs);
    }

    /** A node without thin-provisioning-tools still starts; only these calls then fail, naming the program. */
    public static ThinPoolMetadata onThisHost(CommandRunner runner) {
        return new ThinPoolMetadata(runner, CommandRunner::locate);
    }

    /** Freezes a copy of the pool's metadata for reading; fails when one is held already. */
    void reserve(String volumeGroup, String pool) {
        CommandResult result = kernel.message(volumeGroup, pool, "reserve_metadata_snap");
        if (!result.succeeded()) {
            throw DriverException.unavailable("cannot reserve the metadata snapshot of thin pool " + volumeGroup + "/"
                    + pool + " (is the pool active?): " + result.diagnostic());
        }
    }

    /**
     * Drops the pool's metadata snapshot; false when there was none to drop, or the pool is not
     * active. Outside the caller's deadline: a read stopped by its deadline must still release.
     */
    boolean release(String volumeGroup, String pool) {
        return kernel.releaseMetadataSnapshot(volumeGroup, pool);
    }

    /** The chunks in which two thin devices of the pool differ, ascending, read from the reserved snapshot. */
    void delta(String volumeGroup, String pool, long baseId, long targetId, Consumer<ChunkRange> changed) {
        read(Command.of(programs.apply("thin_delta"), READ_TIMEOUT, "--metadata-snap", "--snap1", Long.toString(baseId), "--snap2",
                Long.toString(targetId), ThinPoolKernel.metadataDevice(volumeGroup, pool).toString()), line -> ThinToolsXml
                .deltaRange(line).ifPresent(changed));
    }

    /** The chunks a thin device has mapped, ascending, read from the reserved snapshot. */
    void mappings(String volumeGroup, String pool, long deviceId, Consumer<ChunkRange> mapped) {
        read(Command.of(programs.apply("thin_dump"), READ_TIMEOUT, "--metadata-snap", "--dev-id", Long.toString(deviceId),
                ThinPoolKernel.metadataDevice(volumeGroup, pool).toString()), line -> ThinToolsXml.mappedRange(line).ifPresent(mapped));
    }

    private void read(Command command, Consumer<String> lines) {
        CommandResult result = runner.runStreaming(command, lines);
        if (!result.succeeded()) {
            throw DriverException.internal(command.display() + " failed (exit " + result.exitCode() + "): "
                    + result.diagnostic());
        }
    }
}
