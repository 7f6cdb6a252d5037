/**
 * Shared: the one way the driver runs a program (an argument array, {@code LC_ALL=C}, both streams
 * drained, a timeout no longer than the call's deadline, SIGTERM before SIGKILL), and that deadline
 * as a value ({@code Deadline}): no RPC type is known here. Depends only on {@code errors}.
 */
package io.lvmqos.exec;
