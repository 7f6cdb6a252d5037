/**
 * Node-only: block devices as the node sees them: device numbers, what blkid finds on a device,
 * filesystem types, making and growing filesystems, and the disks under an LV (sysfs). Depends on
 * {@code exec} and {@code errors} only: a filesystem is grown from what its mount tells of itself
 * ({@link io.lvmqos.device.MountedFilesystem}), so {@code mount} uses this package and not the
 * other way round.
 */
package io.lvmqos.device;
