package io.lvmqos.node;

import csi.v1.Csi;
import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.Command;
import io.lvmqos.exec.CommandResult;
import io.lvmqos.exec.CommandRunner;
import io.lvmqos.mount.PinnedMount;
import io.lvmqos.volume.ManagedVolume;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * NodeGetVolumeStats: usage of the filesystem at a volume path (statfs through stat(1), which
 * also gives inode counts that Java's FileStore does not), and whether the volume is healthy:
 * its device present and answering a read, the path still a mount of it, the filesystem not gone
 * read-only.
 *
 * <p>The read is one 4 KiB block from the device's start with O_DIRECT, so that the page cache
 * cannot answer for a disk that fails: statfs and a mounted filesystem's metadata come from memory
 * and look fine long after the disk has stopped answering. It runs in a child process (dd) with a
 * short timeout, so that a stalled device costs this call five seconds, not a handler thread for
 * ever; kubelet asks about once a minute per volume.
 */
public final class VolumeStats {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final Duration READ_TIMEOUT = Duration.ofSeconds(5);

    private final CommandRunner runner;
    private final Path stat;
    private final Path dd;
    private final VolumeConditions conditions;

    public VolumeStats(CommandRunner runner, VolumeConditions conditions) {
        this.runner = runner;
        this.conditions = conditions;
        this.stat = CommandRunner.locate("stat");
        this.dd = CommandRunner.locate("dd");
    }

    /**
     * Stats of the volume at {@code path}, read through {@code mount}, the mount pinned there
     * (empty when the path is not a mount point), so that a directory swapped on the path cannot
     * make this report on another filesystem.
     */
    public Csi.NodeGetVolumeStatsResponse of(ManagedVolume volume, Path path, Optional<PinnedMount> mount) {
        Csi.NodeGetVolumeStatsResponse answer = stats(volume, path, mount);
        conditions.record(volume.id(), answer.getVolumeCondition());
        return answer;
    }

    private Csi.NodeGetVolumeStatsResponse stats(ManagedVolume volume, Path path, Optional<PinnedMount> mount) {
        Csi.NodeGetVolumeStatsResponse.Builder answer = Csi.NodeGetVolumeStatsResponse.newBuilder();
        if (!Files.exists(volume.devicePath())) {
            return answer.setVolumeCondition(abnormal("the device " + volume.devicePath() + " of the volume is gone"))
                    .build();
        }
        DeviceNumber device = DeviceNumber.of(volume.devicePath());
        if (mount.isEmpty() || !mount.get().device().equals(device)) {
            throw DriverException.notFound("volume " + volume.id() + " is not " + (mount.isPresent()
                    && mount.get().isDeviceNode() ? "published" : "mounted") + " at " + path
                    + mount.map(m -> " (" + m.entry().source() + " " + m.device() + " is)").orElse(""));
        }
        if (mount.get().isDeviceNode()) {
            // a raw block publish: the bind mount of the device node, and the device itself, are what to check
            return answer.addUsage(Csi.VolumeUsage.newBuilder().setUnit(Csi.VolumeUsage.Unit.BYTES)
                            .setTotal(volume.sizeBytes()))
                    .setVolumeCondition(readProblem(volume.devicePath()).map(VolumeStats::abnormal).orElse(normal()))
                    .build();
        }
        Optional<String> unreadable = readProblem(volume.devicePath());
        CommandResult result = runner.run(Command.of(stat, TIMEOUT, "--file-system", "--format", "%S %b %f %a %c %d",
                "--", mount.get().pathForChild()));
        if (!result.succeeded()) {
            return answer.setVolumeCondition(abnormal(unreadable.orElse("statfs of " + path + " failed: "
                    + result.diagnostic()))).build();
        }
        String[] f = result.stdout().strip().split(" ");
        long blockSize = Long.parseLong(f[0]);
        long blocks = Long.parseLong(f[1]);
        long free = Long.parseLong(f[2]);
        long available = Long.parseLong(f[3]);
        long inodes = Long.parseLong(f[4]);
        long freeInodes = Long.parseLong(f[5]);
        answer.addUsage(Csi.VolumeUsage.newBuilder().setUnit(Csi.VolumeUsage.Unit.BYTES)
                .setTotal(blocks * blockSize).setAvailable(available * blockSize).setUsed((blocks - free) * blockSize));
        answer.addUsage(Csi.VolumeUsage.newBuilder().setUnit(Csi.VolumeUsage.Unit.INODES)
                .setTotal(inodes).setAvailable(freeInodes).setUsed(inodes - freeInodes));
        boolean wentReadOnly = mount.get().entry().superOptions().contains("ro");
        if (unreadable.isPresent()) {
            answer.setVolumeCondition(abnormal(unreadable.get()));
        } else if (wentReadOnly) {
            answer.setVolumeCondition(abnormal("the filesystem of volume " + volume.id() + " is read-only (errors made"
                    + " the kernel remount it read-only?)"));
        } else {
            answer.setVolumeCondition(normal());
        }
        return answer.build();
    }

    /** Why the device's first block cannot be read, or empty when it can. */
    private Optional<String> readProblem(Path device) {
        CommandResult result;
        try {
            result = runner.run(Command.of(dd, READ_TIMEOUT, "if=" + device, "of=/dev/null", "bs=4096", "count=1",
                    "iflag=direct", "status=none"));
        } catch (DriverException.DeadlineExceeded e) {
            return Optional.of("the device " + device + " did not answer a 4 KiB read within " + READ_TIMEOUT.toSeconds()
                    + " s: it stalls");
        }
        return result.succeeded() ? Optional.empty()
                : Optional.of("reading the device " + device + " fails: " + result.diagnostic());
    }

    private static Csi.VolumeCondition normal() {
        return Csi.VolumeCondition.newBuilder().setAbnormal(false).setMessage("volume is healthy").build();
    }

    private static Csi.VolumeCondition abnormal(String message) {
        return Csi.VolumeCondition.newBuilder().setAbnormal(true).setMessage(message).build();
    }
}
