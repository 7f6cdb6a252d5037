/**
 * The CSI GroupController service: consistent snapshots of several thin volumes of this node, each
 * mounted filesystem frozen while its snapshot is taken. A controller service, kept in the node
 * module because freezing needs the node's mounts. Depends on {@code mount}, {@code device},
 * {@code volume}, {@code lvm}, {@code exec}, {@code errors}, and {@code metrics} for its freeze
 * counters.
 */
package io.lvmqos.group;
