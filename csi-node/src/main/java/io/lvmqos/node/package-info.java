/**
 * Node-only: the CSI Node service, a thin class ({@code NodeService}: validate, lock, delegate,
 * answer), the flows it delegates to ({@code StageFlow}, {@code PublishFlow}, {@code ExpandFlow})
 * and the pieces only they use: reapplying a volume's limits and io.cost weights to its pods, the
 * conditions and statistics of a published volume. Depends on {@code mount}, {@code device},
 * {@code cgroup}, {@code guarantee}, {@code volume}, {@code lvm}, {@code exec}
 * and {@code errors}, and on {@code controller} for the expansion it shares with it.
 */
package io.lvmqos.node;
