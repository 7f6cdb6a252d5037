/**
 * Node process only: follows the Kubernetes API for VolumeAttributesClass changes of this node's
 * volumes and applies them as ControllerModifyVolume would (the leader-elected resizer reaches only
 * its own node's plugin). The only package that talks to the Kubernetes API, with a list-and-watch
 * client of its own. Depends on {@code controller}, {@code volume} and {@code errors}.
 */
package io.lvmqos.kube;
