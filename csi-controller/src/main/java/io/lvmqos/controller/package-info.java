/**
 * Controller-only: the CSI Controller service and the work behind it: creating, deleting, cloning
 * and snapshotting LVs, capacity, expansion, listing, changes of limits, and the zeroing of a deleted linear LV
 * that a restarted plugin resumes. Depends on {@code volume}, {@code lvm}, {@code exec} (the call's
 * deadline as a value) and {@code errors}; the node
 * side reaches it through the process's wiring ({@code server}), the Kubernetes watcher
 * ({@code kube}) and one class more: NodeExpandVolume ({@code node}) grows an LV the controller side
 * has not grown with the same {@code VolumeExpansion} and its checks of the room. Never the other
 * way round.
 */
package io.lvmqos.controller;
