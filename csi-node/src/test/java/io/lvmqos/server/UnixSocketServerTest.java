package io.lvmqos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import csi.v1.IdentityGrpc;
import io.grpc.ManagedChannel;
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
import java.util.concurrent.TimeUnit;
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
