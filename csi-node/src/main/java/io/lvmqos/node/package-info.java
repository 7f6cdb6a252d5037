/**
 * Node-only: the CSI Node service, a thin class ({@code NodeService}: validate, lock, delegate,
 * answer), the flows it delegates to ({@code StageFlow}, {@code PublishFlow}, {@code ExpandFlow})
 * and the pieces only they use: reapplying a volume's limits to its pods, the conditions and
 * statistics of a published volume. A volume's io.cost weights and floors are {@code guarantee}'s
 * ({@code PodShares}), which the publish flow calls. Depends on {@code mount}, {@code device},
 * {@code cgroup}, {@code guarantee}, {@code volume}, {@code lvm}, {@code exec}
 * and {@code errors}, and on {@code controller} for the expansion it shares with it.
 */
package io.lvmqos.node;
