/**
 * Shared: the volume domain both services agree on. Volume ids, LV names and tags, the parameters
 * of a StorageClass and their QoS limits, topology, access modes, the per-volume locks, and the
 * process's index of its volumes built from lvs ({@code VolumeCatalog}). The state is LVM's
 * tags; this package only reads and writes them through {@code lvm}. Depends on {@code lvm} and
 * {@code errors}.
 */
package io.lvmqos.volume;
