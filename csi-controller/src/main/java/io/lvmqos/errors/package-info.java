/**
 * Shared by every service: the driver's failures as a small sealed family of exceptions, one per
 * gRPC status code, and the one place ({@code StatusMapper}) that turns them into a status at the
 * gRPC edge. Depends on nothing of the driver; every other package may depend on it.
 */
package io.lvmqos.errors;
