/**
 * Node-only: mount(2) and umount2(2) through the C library, the mount table, kubelet's paths and
 * mount propagation, pinned mounts, and who holds a mount. A failed call's errno becomes a status in
 * one place ({@code ErrnoStatus}). Depends on {@code device} (device numbers, filesystem types),
 * {@code exec} (an unmount waits out a process start in flight, whose child could hold a copy of a
 * descriptor on the mount, through {@code ProcessStarts}) and {@code errors}.
 */
package io.lvmqos.mount;
