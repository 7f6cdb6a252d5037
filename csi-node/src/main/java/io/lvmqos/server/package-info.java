/**
 * The process: the command line, the wiring of every service and background task ({@code Driver}),
 * the gRPC server on a unix socket with its two interceptors (the hand-off of each call to a worker
 * thread; logging and status mapping), and logging.
 * The only package that may depend on every other one; none depends on it. Depends on {@code node},
 * {@code group}, {@code kube}, {@code metrics}, {@code guarantee}, {@code cgroup}, {@code mount},
 * {@code device}, {@code controller}, {@code metadata}, {@code identity}, {@code volume}, {@code lvm},
 * {@code exec} and {@code errors}.
 */
package io.lvmqos.server;
