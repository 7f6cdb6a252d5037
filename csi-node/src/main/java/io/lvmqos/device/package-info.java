/**
 * Node-only: block devices as the node sees them: device numbers, what blkid finds on a device,
 * filesystem types, and making and growing filesystems. Depends on {@code exec} and {@code errors},
 * and on {@code mount} for the pinned mount a filesystem grows through (so {@code device} and
 * {@code mount} depend on each other: {@code mount} names devices by their numbers).
 */
package io.lvmqos.device;
