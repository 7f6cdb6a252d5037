/**
 * Shared by the controller, node, group-snapshot and metrics code: the lvm2 command line behind one
 * class ({@code Lvm}), its JSON reports decoded into records, its failures classified by the exact
 * lines lvm prints ({@code LvmFailure}), and the per-group bound on concurrent lvm processes; the
 * thin pools' kernel side behind one owner ({@code ThinPools}: metadata snapshot, transaction id),
 * and the one device-mapper name rule ({@code DeviceMapperName}). Knows
 * LVM, not CSI: nothing here reads a volume id or a tag's meaning. Depends on {@code exec} and
 * {@code errors}.
 */
package io.lvmqos.lvm;
