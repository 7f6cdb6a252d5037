package io.lvmqos.mount;

/**
 * What statfs(2) says of a mounted filesystem: sizes in blocks of {@code blockSize} bytes, and
 * inode counts. {@code available} is what an unprivileged writer may still use, {@code free}
 * includes the blocks reserved for root.
 */
public record FilesystemUsage(long blockSize, long blocks, long free, long available, long inodes, long freeInodes) {

    public long totalBytes() {
        return blocks * blockSize;
    }

    public long usedBytes() {
        return (blocks - free) * blockSize;
    }

    public long availableBytes() {
        return available * blockSize;
    }
}
