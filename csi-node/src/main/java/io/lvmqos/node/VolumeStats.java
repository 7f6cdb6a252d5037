package io.lvmqos.node;

import csi.v1.Csi;
import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.Command;
import io.lvmqos.exec.CommandResult;
import io.lvmqos.exec.CommandRunner;
import io.lvmqos.mount.FilesystemUsage;
import io.lvmqos.mount.PinnedMount;
import io.lvmqos.volume.ManagedVolume;
import io.lvmqos.volume.ThinPoolSpace;
import io.lvmqos.volume.VolumeId;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Function;

/**
 * NodeGetVolumeStats: usage of the filesystem at a volume path (fstatfs(2) on the pinned mount's
 * descriptor, which also gives the inode counts that Java's FileStore does not, without a fork;
 * ext4 and xfs answer statfs from memory), and whether the volume is healthy:
 * its device present and answering a read, the path still a mount of it, the filesystem not gone
 * read-only, and, for a thin volume, its pool not out of data or metadata space ({@link ThinPoolSpace}),
 * which comes first among the reasons: it is what makes writes stall or fail and a filesystem give up.
 *
 * <p>The read is one 4 KiB block from the device's start with O_DIRECT, so that the page cache
 * cannot answer for a disk that fails: statfs and a mounted filesystem's metadata come from memory
 * and look fine long after the disk has stopped answering. It runs in a child process (dd) with a
 * short timeout, so that a stalled device costs this call five seconds, not a handler thread for
 * ever; kubelet asks about once a minute per volume.
 */
public final class VolumeStats {

    private static final Duration READ_TIMEOUT = Duration.ofSeconds(5);

    private final CommandRunner runner;
    private final Path dd;
    private final VolumeConditions conditions;
    private final ThinPoolSpace pools;
    private final Function<VolumeId, Optional<String>> floorShortfall;

    /** @param floorShortfall why a volume's floor is not being kept now, if it is not (FloorWatch) */
    public VolumeStats(CommandRunner runner, VolumeConditions conditions, ThinPoolSpace pools,
                       Function<VolumeId, Optional<String>> floorShortfall) {
        this.runner = runner;
        this.conditions = conditions;
        this.pools = pools;
        this.floorShortfall = floorShortfall;
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
        Optional<String> poolProblem = pools.problem(volume)
                .or(() -> floorShortfall.apply(volume.id()).map(why -> "a floor of the volume is not being kept: " + why));
        if (mount.get().isDeviceNode()) {
            // a raw block publish: the bind mount of the device node, and the device itself, are what to check
            return answer.addUsage(Csi.VolumeUsage.newBuilder().setUnit(Csi.VolumeUsage.Unit.BYTES)
                            .setTotal(volume.sizeBytes()))
                    .setVolumeCondition(poolProblem.or(() -> readProblem(volume.devicePath()))
                            .map(VolumeStats::abnormal).orElse(normal()))
                    .build();
        }
        Optional<String> problem = poolProblem.or(() -> readProblem(volume.devicePath()));
        FilesystemUsage usage;
        try {
            usage = mount.get().usage();
        } catch (DriverException e) {
            return answer.setVolumeCondition(abnormal(problem.orElse(e.getMessage()))).build();
        }
        answer.addUsage(Csi.VolumeUsage.newBuilder().setUnit(Csi.VolumeUsage.Unit.BYTES)
                .setTotal(usage.totalBytes()).setAvailable(usage.availableBytes()).setUsed(usage.usedBytes()));
        answer.addUsage(Csi.VolumeUsage.newBuilder().setUnit(Csi.VolumeUsage.Unit.INODES)
                .setTotal(usage.inodes()).setAvailable(usage.freeInodes()).setUsed(usage.inodes() - usage.freeInodes()));
        boolean wentReadOnly = mount.get().entry().superOptions().contains("ro");
        if (problem.isPresent()) {
            answer.setVolumeCondition(abnormal(problem.get() + (wentReadOnly ? "; the filesystem went read-only"
                    + " (unmount and mount it again: unpublish and publish, or restart the pod)" : "")));
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
