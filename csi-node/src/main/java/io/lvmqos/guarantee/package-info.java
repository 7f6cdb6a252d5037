/**
 * Node-only: the owner of what a volume is guaranteed beyond its caps, from the disk to the pod.
 * io.cost turned on at start for the groups the operator named ({@link io.lvmqos.guarantee.IoCostEnabler},
 * answering the node's {@code GuaranteePolicy}) with a model of the disk it can trust
 * ({@link io.lvmqos.guarantee.IoCostModels}: the operator's, or one {@link io.lvmqos.guarantee.Calibrator}
 * measured through an LV of its own and recorded in the volume group's tag); the pods' weights and
 * floors turned into io.cost weights along their cgroup paths ({@link io.lvmqos.guarantee.ShareCalculator}
 * works out the shares, {@link io.lvmqos.guarantee.PodShares} writes them on every change and
 * rebalances); and whether the floors promised on a disk are being kept
 * ({@link io.lvmqos.guarantee.FloorWatch}). Which pods use a volume it asks the node's flows through
 * {@link io.lvmqos.guarantee.PublishedPods}, so that {@code node} uses this package and not the
 * reverse. It reads cgroup and sysfs files and runs lvm; it knows no CSI or gRPC type. Depends on
 * {@code cgroup}, {@code device}, {@code mount}, {@code lvm}, {@code volume} and {@code errors}.
 */
package io.lvmqos.guarantee;
