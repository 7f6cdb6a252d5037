/**
 * Node-only: the CSI Node service (stage, publish, expand, stats) and the pieces only it uses:
 * reapplying a volume's limits to its pods, the conditions and statistics of a published volume.
 * Depends on {@code mount}, {@code device}, {@code cgroup}, {@code volume}, {@code lvm}, {@code exec}
 * and {@code errors}, and on {@code controller} for the expansion it shares with it.
 */
package io.lvmqos.node;
