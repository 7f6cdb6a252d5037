/**
 * Node-only: a volume's limits written into the cgroups of the pods that use it (cgroup v2
 * {@code io.max}, v1 {@code blkio.throttle}), the pods' and containers' cgroups found in the tree,
 * and the watcher that limits containers started after the volume was published; the pods' io.cost
 * weights ({@code io.weight}, {@code IoWeights}) and a disk's io.cost settings ({@code io.cost.qos}
 * and {@code io.cost.model} at the root, {@code IoCost}), and the I/O counters and pressure read
 * back. Depends on {@code volume} (the limits), {@code device} (device numbers) and {@code errors}.
 */
package io.lvmqos.cgroup;
