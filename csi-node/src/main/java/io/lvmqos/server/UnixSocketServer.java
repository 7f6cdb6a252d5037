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
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import jnr.posix.POSIX;
import jnr.posix.POSIXFactory;

/**
 * The gRPC server on a unix domain socket (netty-epoll). The socket is created with mode 0660:
 * the umask is narrowed around bind(2) so there is no moment at which it is world-accessible.
 */
public final class UnixSocketServer implements AutoCloseable {

    private static final int SOCKET_UMASK = 0117;

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
        EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
        EventLoopGroup workers = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
        // RPCs block on lvm, mkfs and mount: virtual threads keep that cheap without a big pool
        ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
        NettyServerBuilder builder = NettyServerBuilder.forAddress(new DomainSocketAddress(socket.toString()))
                .channelType(EpollServerDomainSocketChannel.class)
                .bossEventLoopGroup(boss)
                .workerEventLoopGroup(workers)
                // grpc asks TCP keepalive of every accepted connection; a unix socket has none, and Netty
                // would log a warning per connection. A null value takes the option off again.
                .withChildOption(ChannelOption.SO_KEEPALIVE, null)
                .executor(executor);
        RpcInterceptor interceptor = new RpcInterceptor();
        for (BindableService service : services) {
            builder.addService(ServerInterceptors.intercept(service, interceptor));
        }
        POSIX posix = POSIXFactory.getNativePOSIX();
        int previousUmask = posix.umask(SOCKET_UMASK);
        Server server;
        try {
            server = builder.build().start();
        } finally {
            posix.umask(previousUmask);
        }
        Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-rw----"));
        return new UnixSocketServer(socket, server, boss, workers, executor);
    }

    /** Stops taking new calls and lets running ones finish, for at most {@code grace}. */
    public void shutdown(Duration grace) throws InterruptedException {
        server.shutdown();
        if (!server.awaitTermination(grace.toMillis(), TimeUnit.MILLISECONDS)) {
            server.shutdownNow();
            server.awaitTermination(1, TimeUnit.SECONDS);
        }
        executor.shutdownNow();
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
