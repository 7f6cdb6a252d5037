import csi.v1.ControllerGrpc;
import csi.v1.Csi;
import csi.v1.IdentityGrpc;
import csi.v1.NodeGrpc;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.unix.DomainSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The client of the image's AOT training run (scripts/build-image, deploy/Dockerfile): it makes the calls
 * kubelet and the sidecars make of a plugin that has just started, so that the classes and methods of
 * the first answers are in the cache, not only those of the start itself. Not part of the image.
 *
 *   java -cp lvmqos.jar:DIR TrainingClient SOCKET      (exits 0 once every call has been answered)
 */
public final class TrainingClient {

    private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(60);

    public static void main(String[] args) throws Exception {
        Path socket = Path.of(args[0]);
        long deadline = System.nanoTime() + WAIT_NANOS;
        while (!Files.exists(socket)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the driver did not open " + socket);
            }
            Thread.sleep(10);
        }
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
        ManagedChannel channel = NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
                .channelType(EpollDomainSocketChannel.class)
                .eventLoopGroup(group)
                .withOption(ChannelOption.SO_KEEPALIVE, null)
                .usePlaintext()
                .build();
        try {
            IdentityGrpc.IdentityBlockingStub identity = IdentityGrpc.newBlockingStub(channel);
            // what the liveness probe and the registrar ask first; without a volume group Probe says not ready
            Csi.ProbeResponse probe = identity.withDeadlineAfter(60, TimeUnit.SECONDS)
                    .probe(Csi.ProbeRequest.getDefaultInstance());
            identity.withDeadlineAfter(10, TimeUnit.SECONDS).getPluginInfo(Csi.GetPluginInfoRequest.getDefaultInstance());
            identity.withDeadlineAfter(10, TimeUnit.SECONDS)
                    .getPluginCapabilities(Csi.GetPluginCapabilitiesRequest.getDefaultInstance());
            NodeGrpc.NodeBlockingStub node = NodeGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
            node.nodeGetInfo(Csi.NodeGetInfoRequest.getDefaultInstance());
            node.nodeGetCapabilities(Csi.NodeGetCapabilitiesRequest.getDefaultInstance());
            ControllerGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .controllerGetCapabilities(Csi.ControllerGetCapabilitiesRequest.getDefaultInstance());
            // a call the driver refuses, which touches nothing: the path of every error answer
            try {
                node.nodeUnpublishVolume(Csi.NodeUnpublishVolumeRequest.getDefaultInstance());
                throw new IllegalStateException("NodeUnpublishVolume without a volume id was accepted");
            } catch (StatusRuntimeException expected) {
                // INVALID_ARGUMENT
            }
            System.out.println("training calls answered; Probe ready=" + probe.getReady().getValue());
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }
}
