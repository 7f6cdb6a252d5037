package io.lvmqos.metadata;

import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.Command;
import io.lvmqos.exec.CommandResult;
import io.lvmqos.exec.CommandRunner;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * A thin pool's mappings, read from its reserved metadata snapshot with thin-provisioning-tools'
 * {@code thin_delta} and {@code thin_dump}. The snapshot itself, its reserve and its release, is
 * {@link io.lvmqos.lvm.ThinPools}'s: these run only inside its {@code readingMetadataSnapshot},
 * given the metadata LV it names.
 */
public final class ThinPoolMetadata {

    /** Reading a large pool's mappings can take minutes; the caller's deadline shortens it. */
    private static final Duration READ_TIMEOUT = Duration.ofMinutes(30);

    private final CommandRunner runner;
    private final Function<String, Path> programs;

    /** {@code programs} finds thin_delta and thin_dump when they are first needed. */
    public ThinPoolMetadata(CommandRunner runner, Function<String, Path> programs) {
        this.runner = runner;
        this.programs = programs;
    }

    /** A node without thin-provisioning-tools still starts; only these calls then fail, naming the program. */
    public static ThinPoolMetadata onThisHost(CommandRunner runner) {
        return new ThinPoolMetadata(runner, CommandRunner::locate);
    }

    /** The chunks in which two thin devices of the pool differ, ascending, read from the reserved snapshot. */
    void delta(Path metadata, long baseId, long targetId, Consumer<ChunkRange> changed) {
        read(Command.of(programs.apply("thin_delta"), READ_TIMEOUT, "--metadata-snap", "--snap1", Long.toString(baseId),
                "--snap2", Long.toString(targetId), metadata.toString()),
                line -> ThinToolsXml.deltaRange(line).ifPresent(changed));
    }

    /** The chunks a thin device has mapped, ascending, read from the reserved snapshot. */
    void mappings(Path metadata, long deviceId, Consumer<ChunkRange> mapped) {
        read(Command.of(programs.apply("thin_dump"), READ_TIMEOUT, "--metadata-snap", "--dev-id", Long.toString(deviceId),
                metadata.toString()), line -> ThinToolsXml.mappedRange(line).ifPresent(mapped));
    }

    private void read(Command command, Consumer<String> lines) {
        CommandResult result = runner.runStreaming(command, lines);
        if (!result.succeeded()) {
            throw DriverException.internal(command.display() + " failed (exit " + result.exitCode() + "): "
                    + result.diagnostic());
        }
    }
}
