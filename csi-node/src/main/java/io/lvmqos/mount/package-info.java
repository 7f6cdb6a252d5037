/**
 * Node-only: mount(2) and umount2(2) through the C library, the mount table, kubelet's paths and
 * mount propagation, pinned mounts, and who holds a mount. Depends on {@code device} (device
 * numbers, filesystem types) and {@code errors}.
 */
package io.lvmqos.mount;
