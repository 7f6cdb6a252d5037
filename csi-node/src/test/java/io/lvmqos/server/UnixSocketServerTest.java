package io.lvmqos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import csi.v1.IdentityGrpc;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.unix.DomainSocketAddress;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where and how the server's socket appears: bound aside, mode 0660, renamed into place. */
class UnixSocketServerTest {

    @TempDir
    Path dir;

    private static final class ReadyIdentity extends IdentityGrpc.IdentityImplBase {
        @Override
        public void probe(Csi.ProbeRequest request, StreamObserver<Csi.ProbeResponse> reply) {
            reply.onNext(Csi.ProbeResponse.newBuilder().setReady(com.google.protobuf.BoolValue.of(true)).build());
            reply.onCompleted();
        }
    }

    @Test
    void theSocketAnswersAtItsPathWithMode0660AndNothingIsLeftBeside() throws Exception {
        Path socket = dir.resolve("plugin").resolve("csi.sock");
        UnixSocketServer server = UnixSocketServer.start(socket, List.of(new ReadyIdentity()));
        try {
            int mode = (Integer) Files.getAttribute(socket, "unix:mode", LinkOption.NOFOLLOW_LINKS);
            assertEquals(0140000, mode & 0170000, "a socket");
            assertEquals("rw-rw----", PosixFilePermissions.toString(
                    Files.getPosixFilePermissions(socket, LinkOption.NOFOLLOW_LINKS)));
            try (Stream<Path> beside = Files.list(socket.getParent())) {
                assertEquals(List.of(socket), beside.toList(), "the directory it was bound in is removed");
            }
            assertTrue(probe(socket).getReady().getValue());
        } finally {
            server.shutdown(Duration.ofSeconds(1));
        }
    }

    @Test
    void aFileInTheSocketsPlaceIsRefusedAndLeftAlone() throws Exception {
        Path socket = dir.resolve("csi.sock");
        Files.writeString(socket, "not a socket");
        assertThrows(IOException.class, () -> UnixSocketServer.start(socket, List.of(new ReadyIdentity())));
        assertEquals("not a socket", Files.readString(socket));
    }

    @Test
    void aPathTooLongToBindLeavesNothingBehind() throws Exception {
        Path parent = dir.resolve("x".repeat(100));
        Path socket = parent.resolve("csi.sock");
        IOException refused = assertThrows(IOException.class,
                () -> UnixSocketServer.start(socket, List.of(new ReadyIdentity())));
        assertTrue(refused.getMessage().contains("choose an --endpoint in a shorter directory"), refused.getMessage());
        try (Stream<Path> left = Files.list(parent)) {
            assertEquals(List.of(), left.toList());
        }
    }

    @Test
    void theLongestSocketPathTheKernelTakesIsBound() throws Exception {
        // 107 bytes for the staged <dir>/.bindXXXX/s; the socket's own name is as long as kubelet's
        String prefix = dir.toString() + "/";
        int dirLength = UnixSocketServer.MAX_SOCKET_PATH_BYTES - prefix.length() - "/.bind0000/s".length();
        Path socket = dir.resolve("d".repeat(dirLength)).resolve("csi.sock");
        try (UnixSocketServer server = UnixSocketServer.start(socket, List.of(new ReadyIdentity()))) {
            assertTrue(probe(socket).getReady().getValue());
        }
    }

    /**
     * GetPluginInfo blocks until released, recording where and in what context it ran; Probe
     * answers at once: a call stuck in its handler must leave the transport free for the others.
     */
    private static final class BlockingInfo extends IdentityGrpc.IdentityImplBase {
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final CountDownLatch cancelled = new CountDownLatch(1);
        final AtomicReference<String> thread = new AtomicReference<>();
        final AtomicReference<Deadline> deadline = new AtomicReference<>();

        @Override
        public void getPluginInfo(Csi.GetPluginInfoRequest request, StreamObserver<Csi.GetPluginInfoResponse> reply) {
            thread.set(Thread.currentThread().getName());
            deadline.set(Context.current().getDeadline());
            Context.current().addListener(context -> cancelled.countDown(), Runnable::run);
            entered.countDown();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            reply.onNext(Csi.GetPluginInfoResponse.newBuilder().setName("blocking").build());
            reply.onCompleted();
        }

        @Override
        public void probe(Csi.ProbeRequest request, StreamObserver<Csi.ProbeResponse> reply) {
            reply.onNext(Csi.ProbeResponse.newBuilder().setReady(com.google.protobuf.BoolValue.of(true)).build());
            reply.onCompleted();
        }
    }

    @Test
    void aHandlerRunsOnAWorkerInItsCallsContextAndABlockedOneLeavesTheOthersAnswered() throws Exception {
        Path socket = dir.resolve("csi.sock");
        BlockingInfo service = new BlockingInfo();
        try (UnixSocketServer server = UnixSocketServer.start(socket, List.of(service));
             Client client = new Client(socket)) {
            var info = IdentityGrpc.newFutureStub(client.channel).withDeadlineAfter(60, TimeUnit.SECONDS)
                    .getPluginInfo(Csi.GetPluginInfoRequest.getDefaultInstance());
            assertTrue(service.entered.await(30, TimeUnit.SECONDS), "the handler never ran");
            assertTrue(service.thread.get().startsWith("rpc-"), "ran on " + service.thread.get());
            assertNotNull(service.deadline.get(), "the client's deadline reaches the handler's context");
            // the same connection, the same event loop: answered while the other call's handler blocks
            assertTrue(IdentityGrpc.newBlockingStub(client.channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                    .probe(Csi.ProbeRequest.getDefaultInstance()).getReady().getValue());
            service.release.countDown();
            assertEquals("blocking", info.get(30, TimeUnit.SECONDS).getName());
        }
    }

    @Test
    void aCallWhoseDeadlinePassesCancelsItsHandlersContext() throws Exception {
        Path socket = dir.resolve("csi.sock");
        BlockingInfo service = new BlockingInfo();
        try (UnixSocketServer server = UnixSocketServer.start(socket, List.of(service));
             Client client = new Client(socket)) {
            StatusRuntimeException failed = assertThrows(StatusRuntimeException.class, () -> IdentityGrpc
                    .newBlockingStub(client.channel).withDeadlineAfter(200, TimeUnit.MILLISECONDS)
                    .getPluginInfo(Csi.GetPluginInfoRequest.getDefaultInstance()));
            assertEquals(Status.Code.DEADLINE_EXCEEDED, failed.getStatus().getCode());
            assertTrue(service.cancelled.await(30, TimeUnit.SECONDS), "the handler's context was never cancelled");
            service.release.countDown();
        }
    }

    /** A client of the socket, as kubelet's: one channel on its own event loop. */
    private static final class Client implements AutoCloseable {
        private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
        private final ManagedChannel channel;

        Client(Path socket) {
            channel = NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
                    .channelType(EpollDomainSocketChannel.class).eventLoopGroup(group).usePlaintext().build();
        }

        @Override
        public void close() throws InterruptedException {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    private static Csi.ProbeResponse probe(Path socket) throws InterruptedException {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
        ManagedChannel channel = NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
                .channelType(EpollDomainSocketChannel.class).eventLoopGroup(group).usePlaintext().build();
        try {
            return IdentityGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .probe(Csi.ProbeRequest.getDefaultInstance());
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }
}
