/**
 * Node-only: a volume's limits written into the cgroups of the pods that use it (cgroup v2
 * {@code io.max}, v1 {@code blkio.throttle}), the pods' and containers' cgroups found in the tree,
 * and the watcher that limits containers started after the volume was published. Depends on
 * {@code volume} (the limits), {@code device} (device numbers) and {@code errors}.
 */
package io.lvmqos.cgroup;
