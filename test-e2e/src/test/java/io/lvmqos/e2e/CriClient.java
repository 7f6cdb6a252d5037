package io.lvmqos.e2e;

import io.grpc.ManagedChannel;
import io.lvmqos.e2e.cri.RuntimeServiceGrpc;
import io.netty.channel.EventLoopGroup;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** A CRI client over a container runtime's unix socket, as kubelet talks to containerd. */
public final class CriClient implements AutoCloseable {

    private final ManagedChannel channel;
    private final EventLoopGroup group;

    private CriClient(ManagedChannel channel, EventLoopGroup group) {
        this.channel = channel;
        this.group = group;
    }

    public static CriClient connect(Path socket) {
        EventLoopGroup group = CsiClient.newEventLoopGroup();
        return new CriClient(CsiClient.unixChannel(socket, group), group);
    }

    /** The runtime service, each call bounded: kubelet's own default for runtime calls is 2 minutes. */
    public RuntimeServiceGrpc.RuntimeServiceBlockingStub runtime(Duration deadline) {
        return RuntimeServiceGrpc.newBlockingStub(channel).withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS);
    }

    public RuntimeServiceGrpc.RuntimeServiceBlockingStub runtime() {
        return runtime(Duration.ofMinutes(2));
    }

    @Override
    public void close() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
}
