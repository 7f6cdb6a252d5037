package io.lvmqos.e2e;

import csi.v1.ControllerGrpc;
import csi.v1.GroupControllerGrpc;
import csi.v1.IdentityGrpc;
import csi.v1.NodeGrpc;
import csi.v1.SnapshotMetadataGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.unix.DomainSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** A CSI client over the driver's unix socket, as kubelet and the sidecars talk to it. */
public final class CsiClient implements AutoCloseable {

    private final ManagedChannel channel;
    private final EventLoopGroup group;

    private CsiClient(ManagedChannel channel, EventLoopGroup group) {
        this.channel = channel;
        this.group = group;
    }

    public static CsiClient connect(Path socket) {
        EventLoopGroup group = newEventLoopGroup();
        return new CsiClient(unixChannel(socket, group), group);
    }

    static EventLoopGroup newEventLoopGroup() {
        return new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
    }

    /** A plaintext gRPC channel over a unix socket, as kubelet opens one to a plugin or a runtime. */
    static ManagedChannel unixChannel(Path socket, EventLoopGroup group) {
        return NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
                .channelType(EpollDomainSocketChannel.class)
                .eventLoopGroup(group)
                // as in the driver's server: no TCP keepalive on a unix socket, and no warning about it
                .withOption(ChannelOption.SO_KEEPALIVE, null)
                .usePlaintext()
                .build();
    }

    /** Waits until the socket file exists, for a driver that is still starting. */
    public static void awaitSocket(Path socket, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!Files.exists(socket)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the driver did not open " + socket + " within " + timeout);
            }
            Thread.sleep(10);
        }
    }

    public IdentityGrpc.IdentityBlockingStub identity() {
        return IdentityGrpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
    }

    public ControllerGrpc.ControllerBlockingStub controller() {
        return ControllerGrpc.newBlockingStub(channel).withDeadlineAfter(120, TimeUnit.SECONDS);
    }

    /** Without a deadline of its own: a test gives each streaming call the one it checks. */
    public SnapshotMetadataGrpc.SnapshotMetadataBlockingStub snapshotMetadata() {
        return SnapshotMetadataGrpc.newBlockingStub(channel);
    }

    public GroupControllerGrpc.GroupControllerBlockingStub groupController() {
        return GroupControllerGrpc.newBlockingStub(channel).withDeadlineAfter(120, TimeUnit.SECONDS);
    }

    public NodeGrpc.NodeBlockingStub node() {
        return NodeGrpc.newBlockingStub(channel).withDeadlineAfter(120, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
}
