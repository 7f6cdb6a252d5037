package io.lvmqos.metrics;

import io.lvmqos.device.DeviceNumber;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Device-mapper names from sysfs ({@code /sys/dev/block/MAJ:MIN/dm/name}), so that a mounted
 * device can be told to be one of our LVs without running lvm.
 */
public final class SysBlock {

    private final Path sys;

    public SysBlock(Path sys) {
        this.sys = sys;
    }

    /** The dm name of the device; empty when it is not a device-mapper device (or is gone). */
    public Optional<String> dmName(DeviceNumber device) {
        return read(sys.resolve("dev/block").resolve(device.toString()).resolve("dm/name"));
    }

    private static Optional<String> read(Path file) {
        try {
            return Optional.of(Files.readString(file, StandardCharsets.UTF_8).strip());
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }
}
