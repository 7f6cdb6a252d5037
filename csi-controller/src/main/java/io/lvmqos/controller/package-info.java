/**
 * Controller-only: the CSI Controller service and the work behind it: creating, deleting, cloning
 * and snapshotting LVs, capacity, expansion, listing, and the zeroing of a deleted linear LV that a
 * restarted plugin resumes. Depends on {@code volume}, {@code lvm} and {@code errors}; the node
 * side reaches it only through the process's wiring ({@code server}) and the Kubernetes watcher
 * ({@code kube}), never the other way round.
 */
package io.lvmqos.controller;
