/**
 * Shared by both services' deployments: the CSI Identity service and the background health check
 * behind its Probe. Depends on {@code lvm} and {@code errors}.
 */
package io.lvmqos.identity;
