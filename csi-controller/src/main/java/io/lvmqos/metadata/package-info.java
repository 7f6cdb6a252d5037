/**
 * Controller-only: the CSI SnapshotMetadata service, the allocated and changed blocks of thin
 * snapshots read from their pool's metadata with thin_dump, paged as they are read. Depends on
 * {@code volume}, {@code lvm}, {@code exec} and {@code errors}.
 */
package io.lvmqos.metadata;
