package io.lvmqos.server;

import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The gRPC server on a unix domain socket (netty-epoll), mode 0660. The socket is bound in a
 * directory of its own that only root can enter, given its mode there, and then renamed into
 * place, so there is no moment at which others can reach it. (The process-wide umask, narrowed
 * around bind(2) before, raced with files other threads create, and needed a native binding of
 * libc, jnr-posix, that loaded about 190 classes at start for that one call.)
 */
public final class UnixSocketServer implements AutoCloseable {

    /**
     * How long calls still running at the end of the shutdown grace have to end once interrupted:
     * an interrupted lvm change gets SIGTERM and up to 15 s to complete (CommandRunner). With the
     * driver's 10 s grace this stays within the DaemonSet's 30 s termination grace.
     */
    static final Duration INTERRUPTED_CALLS_GRACE = Duration.ofSeconds(17);

    private final Path socket;
    private final Server server;
    private final EventLoopGroup boss;
    private final EventLoopGroup workers;
    private final ExecutorService executor;

    private UnixSocketServer(Path socket, Server server, EventLoopGroup boss, EventLoopGroup workers,
                             ExecutorService executor) {
        this.socket = socket;
        this.server = server;
        this.boss = boss;
        this.workers = workers;
        this.executor = executor;
    }

    /** Parses {@code unix:///path} (or {@code unix:/path}) into the socket's path. */
    public static Path socketPath(String endpoint) {
        String path;
        if (endpoint.startsWith("unix://")) {
            path = endpoint.substring("unix://".length());
        } else if (endpoint.startsWith("unix:")) {
            path = endpoint.substring("unix:".length());
        } else {
            throw new IllegalArgumentException("endpoint must be unix:///absolute/path, got " + endpoint);
        }
        Path socket = Path.of(path);
        if (!socket.isAbsolute()) {
            throw new IllegalArgumentException("endpoint path must be absolute: " + endpoint);
        }
        return socket.normalize();
    }

    public static UnixSocketServer start(Path socket, List<BindableService> services) throws IOException {
        removeStaleSocket(socket);
        Files.createDirectories(socket.getParent());
        Path staging = stagingDirectory(socket);
        Path bound = staging.resolve("s");
        EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
        EventLoopGroup workers = new TaskPassClockLoops(1, "grpc-loop");
        // RPCs run on platform threads, one per call in progress. On virtual threads, a JNI call
        // (the mount package's mount, umount2, open) or a process start pins the carrier, and on a one-CPU node
        // a single umount2 stuck on a stalled device then stalls every handler, Probe included.
        // The per-volume lock and the lvm bound end every wait at the caller's deadline, so the
        // number of threads follows the calls in flight. gRPC's own callbacks run on the event loop
        // (a direct executor), and each call reaches its thread once, at its half-close (HandOffInterceptor).
        ExecutorService executor = Executors.newCachedThreadPool(Thread.ofPlatform().name("rpc-", 0).factory());
        NettyServerBuilder builder = NettyServerBuilder.forAddress(new DomainSocketAddress(bound.toString()))
                .channelType(EpollServerDomainSocketChannel.class)
                .bossEventLoopGroup(boss)
                .workerEventLoopGroup(workers)
                // grpc asks TCP keepalive of every accepted connection; a unix socket has none, and Netty
                // would log a warning per connection. A null value takes the option off again.
                .withChildOption(ChannelOption.SO_KEEPALIVE, null)
                // No keepalive pings from the server: a peer on a unix socket that goes away closes it.
                // The pinger would also read the clock at every frame it receives.
                .keepAliveTime(Long.MAX_VALUE, TimeUnit.NANOSECONDS)
                .directExecutor();
        RpcInterceptor interceptor = new RpcInterceptor();
        HandOffInterceptor handOff = new HandOffInterceptor(executor);
        for (BindableService service : services) {
            // the last is called first: the call is handed off outside, logged and mapped on the worker
            builder.addService(ServerInterceptors.intercept(service, interceptor, handOff));
        }
        Server server = null;
        try {
            server = builder.build().start();
            Files.setPosixFilePermissions(bound, PosixFilePermissions.fromString("rw-rw----"));
            // a listening socket stays bound to its inode whatever its name: clients connect at the new one
            Files.move(bound, socket, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException | RuntimeException e) {
            if (server != null) {
                server.shutdownNow();
            }
            executor.shutdownNow();
            boss.shutdownGracefully(0, 0, TimeUnit.SECONDS);
            workers.shutdownGracefully(0, 0, TimeUnit.SECONDS);
            throw e;
        } finally {
            Files.deleteIfExists(bound);
            Files.delete(staging);
        }
        return new UnixSocketServer(socket, server, boss, workers, executor);
    }

    /**
     * sun_path holds 108 bytes with its terminating NUL. The socket is bound at
     * {@code <dir>/.bindXXXX/s} before it is renamed to its real name, eight bytes longer than
     * {@code <dir>/<name>} for kubelet's usual {@code csi.sock}.
     */
    static final int MAX_SOCKET_PATH_BYTES = 107;

    /**
     * A new directory beside the socket (so the rename stays within one file system) that only
     * root can enter, with a short name: the bind happens at its length, not the socket's.
     */
    private static Path stagingDirectory(Path socket) throws IOException {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int attempt = 0; ; attempt++) {
            Path staging = socket.resolveSibling(String.format(".bind%04x", random.nextInt(0x10000)));
            int bytes = staging.resolve("s").toString().getBytes(StandardCharsets.UTF_8).length;
            if (bytes > MAX_SOCKET_PATH_BYTES) {
                throw new IOException("the socket's directory " + socket.getParent() + " is too long to bind a"
                        + " unix socket in: binding needs " + bytes + " bytes of the " + MAX_SOCKET_PATH_BYTES
                        + " a socket path may have; choose an --endpoint in a shorter directory");
            }
            try {
                return Files.createDirectory(staging,
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            } catch (FileAlreadyExistsException e) {
                if (attempt == 16) {
                    throw e;
                }
            }
        }
    }

    /**
     * Stops taking new calls and lets running ones finish, for at most {@code grace}; then
     * interrupts what is left and waits for it: an interrupted command is stopped with SIGTERM and
     * its grace (lvm completes a change in progress first), never killed outright, and returning
     * earlier would let the JVM exit under it.
     */
    public void shutdown(Duration grace) throws InterruptedException {
        server.shutdown();
        if (!server.awaitTermination(grace.toMillis(), TimeUnit.MILLISECONDS)) {
            server.shutdownNow();
            server.awaitTermination(1, TimeUnit.SECONDS);
        }
        executor.shutdownNow();
        executor.awaitTermination(INTERRUPTED_CALLS_GRACE.toMillis(), TimeUnit.MILLISECONDS);
        boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        workers.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        try {
            Files.deleteIfExists(socket);
        } catch (IOException ignored) {
            // the next start removes a stale socket anyway
        }
    }

    public void awaitTermination() throws InterruptedException {
        server.awaitTermination();
    }

    public Path socket() {
        return socket;
    }

    @Override
    public void close() throws InterruptedException {
        shutdown(Duration.ofSeconds(10));
    }

    private static void removeStaleSocket(Path socket) throws IOException {
        if (!Files.exists(socket, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Object type = Files.readAttributes(socket, "unix:mode", LinkOption.NOFOLLOW_LINKS).get("mode");
        int mode = (Integer) type;
        boolean isSocket = (mode & 0170000) == 0140000;
        if (!isSocket) {
            throw new IOException(socket + " exists and is not a socket; refusing to remove it");
        }
        Files.delete(socket);
    }
}
