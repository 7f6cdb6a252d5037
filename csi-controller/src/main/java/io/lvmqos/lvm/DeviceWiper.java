package io.lvmqos.lvm;

import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.Command;
import io.lvmqos.exec.CommandResult;
import io.lvmqos.exec.CommandRunner;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Zeroes a linear LV before its extents go back to the volume group, so that the next tenant
 * never reads this one's data. {@code blkdiscard --zeroout} issues BLKZEROOUT: the kernel uses
 * the device's write-zeroes offload where it has one (guaranteed zeroes, unlike plain discard)
 * and writes zeroes otherwise. blkdiscard opens the device exclusively, so it refuses a device
 * that is mounted or otherwise held.
 */
public final class DeviceWiper {

    private static final Duration TIMEOUT = Duration.ofMinutes(10);

    private final CommandRunner runner;
    private final Path blkdiscard;

    public DeviceWiper(CommandRunner runner, Path blkdiscard) {
        this.runner = runner;
        this.blkdiscard = blkdiscard;
    }

    public static DeviceWiper onThisHost(CommandRunner runner) {
        return new DeviceWiper(runner, CommandRunner.locate("blkdiscard"));
    }

    /** Zeroes {@code length} bytes from {@code offset}; both must be multiples of the sector size. */
    public void zero(Path device, long offset, long length) {
        CommandResult result = runner.run(Command.of(blkdiscard, TIMEOUT, "--zeroout", "--offset", Long.toString(offset),
                "--length", Long.toString(length), "--", device.toString()));
        if (!result.succeeded()) {
            String said = result.diagnostic();
            if (said.contains("busy") || said.contains("in use")) {
                throw DriverException.failedPrecondition("cannot wipe " + device + ": it is in use: " + said);
            }
            throw DriverException.internal("wiping " + device + " failed: " + said);
        }
    }
}
