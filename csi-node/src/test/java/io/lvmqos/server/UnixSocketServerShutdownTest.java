package io.lvmqos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import csi.v1.IdentityGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.lvmqos.exec.Command;
import io.lvmqos.exec.CommandRunner;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.unix.DomainSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Shutdown while a call runs a command: past the grace for calls, the command is stopped with
 * SIGTERM and given its time to finish, and shutdown returns only after that, so that the JVM
 * does not exit under it. /bin/sh stands in for an lvm that completes its change on SIGTERM.
 */
class UnixSocketServerShutdownTest {

    @TempDir
    Path dir;

    /** A Probe that runs a command which, on SIGTERM, takes a moment and then records that it finished. */
    private final class SlowCommandService extends IdentityGrpc.IdentityImplBase {
        @Override
        public void probe(Csi.ProbeRequest request, StreamObserver<Csi.ProbeResponse> reply) {
            new CommandRunner().run(Command.of(Path.of("/bin/sh"), Duration.ofMinutes(1), "-c",
                    "trap '/bin/sleep 0.5; echo finished > " + dir.resolve("finished") + "; exit 0' TERM; echo $$ > "
                            + dir.resolve("started") + "; while :; do /bin/sleep 0.05; done")
                    .withStopGrace(Duration.ofSeconds(10)));
            reply.onNext(Csi.ProbeResponse.getDefaultInstance());
            reply.onCompleted();
        }
    }

    @Test
    void shutdownLetsARunningCommandFinishOnSigtermBeforeItReturns() throws Exception {
        Path socket = dir.resolve("csi.sock");
        UnixSocketServer server = UnixSocketServer.start(socket, List.of(new SlowCommandService()));
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
        ManagedChannel channel = NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
                .channelType(EpollDomainSocketChannel.class).eventLoopGroup(group).usePlaintext().build();
        try {
            IdentityGrpc.newFutureStub(channel).probe(Csi.ProbeRequest.getDefaultInstance());
            for (int i = 0; i < 500 && !Files.exists(dir.resolve("started")); i++) {
                Thread.sleep(20);
            }
            assertTrue(Files.exists(dir.resolve("started")), "the call never started its command");

            server.shutdown(Duration.ofMillis(200));

            assertTrue(Files.exists(dir.resolve("finished")),
                    "shutdown returned before the interrupted command had finished on SIGTERM");
            assertEquals("finished\n", Files.readString(dir.resolve("finished")));
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }
}
