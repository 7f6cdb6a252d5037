/**
 * What the node needs to keep a guarantee (an io.cost weight or floor) that it does not learn from
 * the volume: a model of the disk it can trust ({@link io.lvmqos.guarantee.IoCostModels}: the
 * operator's, or one {@link io.lvmqos.guarantee.Calibrator} measured through an LV of its own and
 * recorded in the volume group's tag), and whether the floors promised on a disk are being kept
 * ({@link io.lvmqos.guarantee.FloorWatch}). It reads cgroup and sysfs files and runs lvm; it knows
 * no CSI or gRPC type. Depends on {@code cgroup}, {@code device}, {@code lvm}, {@code volume} and
 * {@code errors}.
 */
package io.lvmqos.guarantee;
