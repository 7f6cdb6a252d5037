/**
 * Node process only: the Prometheus endpoint (per volume and pod limits and I/O, per RPC latency
 * and errors, volume group and thin pool capacity), computed when scraped from the mount table,
 * sysfs, the cgroup tree, lvm and the volume index. Depends on {@code node}, {@code cgroup},
 * {@code mount}, {@code device}, {@code volume}, {@code lvm} and {@code errors}.
 */
package io.lvmqos.metrics;
