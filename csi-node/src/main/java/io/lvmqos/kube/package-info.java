/**
 * Node process only: follows the Kubernetes API for VolumeAttributesClass changes of this node's
 * volumes and applies them as ControllerModifyVolume would (the leader-elected resizer reaches only
 * its own node's plugin). The only package that touches the Kubernetes client. Depends on
 * {@code controller}, {@code volume} and {@code errors}.
 */
package io.lvmqos.kube;
