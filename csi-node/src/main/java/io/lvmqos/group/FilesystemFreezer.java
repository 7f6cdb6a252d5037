package io.lvmqos.group;

import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.Command;
import io.lvmqos.exec.CommandResult;
import io.lvmqos.exec.CommandRunner;
import io.lvmqos.exec.Deadline;
import io.lvmqos.mount.PinnedMount;
import java.time.Duration;

/**
 * Freezes and thaws mounted filesystems with util-linux's fsfreeze (FIFREEZE / FITHAW): a frozen
 * filesystem has written out its dirty data and blocks new writes, so a snapshot of its device
 * taken meanwhile is what a clean unmount would leave.
 *
 * <p>fsfreeze is given the pinned mount's descriptor path, never a mount point's name: a name
 * swapped between the freeze and the thaw would thaw another filesystem and leave this one frozen
 * for good, or freeze one that is not the volume's.
 */
final class FilesystemFreezer {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final CommandRunner runner;

    FilesystemFreezer(CommandRunner runner) {
        this.runner = runner;
    }

    void freeze(PinnedMount mount) {
        CommandResult result = runner.run(command("--freeze", mount));
        if (!result.succeeded()) {
            throw DriverException.failedPrecondition("cannot freeze the filesystem at " + mount.entry().mountPoint()
                    + ": " + result.diagnostic());
        }
    }

    /**
     * Thaws, outside the caller's deadline (a call past its deadline must still thaw); false when
     * the filesystem was not frozen or is gone.
     */
    boolean thaw(PinnedMount mount) {
        return runner.run(command("--unfreeze", mount), Deadline.NONE).succeeded();
    }

    private static Command command(String action, PinnedMount mount) {
        return Command.of(CommandRunner.locate("fsfreeze"), TIMEOUT, action, mount.pathForChild());
    }
}
