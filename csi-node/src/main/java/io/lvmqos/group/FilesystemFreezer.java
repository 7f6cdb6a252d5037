package io.lvmqos.group;

import io.grpc.Context;
import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.Command;
import io.lvmqos.exec.CommandResult;
import io.lvmqos.exec.CommandRunner;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Freezes and thaws mounted filesystems with util-linux's fsfreeze (FIFREEZE / FITHAW): a frozen
 * filesystem has written out its dirty data and blocks new writes, so a snapshot of its device
 * taken meanwhile is what a clean unmount would leave.
 */
final class FilesystemFreezer {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final CommandRunner runner;

    FilesystemFreezer(CommandRunner runner) {
        this.runner = runner;
    }

    void freeze(Path mountPoint) {
        CommandResult result = runner.run(command("--freeze", mountPoint));
        if (!result.succeeded()) {
            throw DriverException.failedPrecondition("cannot freeze the filesystem at " + mountPoint + ": "
                    + result.diagnostic());
        }
    }

    /**
     * Thaws, outside the caller's deadline (a call past its deadline must still thaw); false when
     * the filesystem was not frozen or is gone.
     */
    boolean thaw(Path mountPoint) {
        Command thaw = command("--unfreeze", mountPoint);
        try {
            return Context.ROOT.call(() -> runner.run(thaw)).succeeded();
        } catch (DriverException e) {
            throw e;
        } catch (Exception e) {
            throw DriverException.internal(thaw.display() + " failed", e);
        }
    }

    private static Command command(String action, Path mountPoint) {
        return Command.of(CommandRunner.locate("fsfreeze"), TIMEOUT, action, mountPoint.toString());
    }
}
