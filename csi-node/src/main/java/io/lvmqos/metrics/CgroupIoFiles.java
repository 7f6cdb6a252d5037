package io.lvmqos.metrics;

import io.lvmqos.cgroup.IoCounters;
import io.lvmqos.cgroup.IoPressure;
import io.lvmqos.device.DeviceNumber;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Reads a pod cgroup's I/O accounting: {@code io.stat} and {@code io.pressure} on cgroup v2, the
 * blkio throttle counters on v1. Both v2 files count the cgroup's whole subtree, which is what a
 * pod is (its containers are child cgroups); on v1 the {@code _recursive} files do the same.
 */
final class CgroupIoFiles {

    static final String IO_STAT = "io.stat";
    static final String IO_PRESSURE = "io.pressure";
    static final String V1_BYTES = "blkio.throttle.io_service_bytes";
    static final String V1_OPS = "blkio.throttle.io_serviced";
    static final String RECURSIVE = "_recursive";

    /** The cgroup's counters for the device; empty when the cgroup has no I/O accounting file. */
    Optional<IoCounters> counters(Path cgroup, DeviceNumber device) {
        Optional<String> ioStat = read(cgroup.resolve(IO_STAT));
        if (ioStat.isPresent()) {
            return Optional.of(IoCounters.fromIoStat(ioStat.get(), device));
        }
        Optional<String> bytes = read(cgroup.resolve(V1_BYTES + RECURSIVE)).or(() -> read(cgroup.resolve(V1_BYTES)));
        Optional<String> ops = read(cgroup.resolve(V1_OPS + RECURSIVE)).or(() -> read(cgroup.resolve(V1_OPS)));
        if (bytes.isPresent() && ops.isPresent()) {
            return Optional.of(IoCounters.fromBlkio(bytes.get(), ops.get(), device));
        }
        return Optional.empty();
    }

    /** Empty on cgroup v1 and on kernels built or booted without pressure stall information. */
    Optional<IoPressure> pressure(Path cgroup) {
        return read(cgroup.resolve(IO_PRESSURE)).map(IoPressure::parse);
    }

    private static Optional<String> read(Path file) {
        try {
            return Optional.of(Files.readString(file, StandardCharsets.US_ASCII));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }
}
