package io.lvmqos.lvm;

/** One VG as {@code vgs} reports it, sizes in bytes. */
public record VolumeGroup(String name, long sizeBytes, long freeBytes, long extentSizeBytes) {

    /** Rounds a size up to whole extents, the unit LVM allocates in. */
    public long roundUpToExtent(long bytes) {
        long extents = (bytes + extentSizeBytes - 1) / extentSizeBytes;
        return Math.max(1, extents) * extentSizeBytes;
    }
}
