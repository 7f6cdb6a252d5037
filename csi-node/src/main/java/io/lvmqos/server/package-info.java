/**
 * The process: the command line, the wiring of every service and background task ({@code Driver}),
 * the gRPC server on a unix socket with its one interceptor (logging, status mapping), and logging.
 * The only package that may depend on every other one; none depends on it.
 */
package io.lvmqos.server;
