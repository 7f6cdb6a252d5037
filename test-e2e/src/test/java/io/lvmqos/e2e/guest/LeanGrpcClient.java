package io.lvmqos.e2e.guest;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * A unary gRPC client with no threads of its own: HTTP/2 (RFC 9113) written and read by the calling
 * thread on a blocking unix socket, one call at a time on one connection. PublishCostBenchmark times
 * the driver with it beside grpc-java's client, whose event loop and executor hand each call between
 * threads (in the UML guest every such hand-off is a trap into the guest kernel), so that what the
 * driver costs a call can be told from what grpc-java costs its caller. kubelet's Go client sits
 * between the two.
 *
 * <p>Requests carry their headers as HPACK literals without indexing (RFC 7541, section 6.2.2), no
 * Huffman coding. Response headers are not decoded: grpc-java's server ends a unary call that
 * failed with a trailers-only response (one HEADERS frame, no DATA), and a call that succeeded with
 * its one message in DATA then trailers, so a call with no message is reported as failed, without
 * its status. The receive windows are opened to 1 GiB at the start, so no WINDOW_UPDATE is owed.
 */
final class LeanGrpcClient implements AutoCloseable {

    private static final byte[] PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final int DATA = 0x0;
    private static final int HEADERS = 0x1;
    private static final int RST_STREAM = 0x3;
    private static final int SETTINGS = 0x4;
    private static final int PING = 0x6;
    private static final int GOAWAY = 0x7;
    private static final int WINDOW_UPDATE = 0x8;
    private static final int END_STREAM = 0x1;
    private static final int ACK = 0x1;
    private static final int END_HEADERS = 0x4;
    private static final int PADDED = 0x8;
    private static final int SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
    private static final int WINDOW = 1 << 30;
    private static final int FRAME_HEADER = 9;

    private final SocketChannel channel;
    private final ByteBuffer in = ByteBuffer.allocate(1 << 20).flip();
    private int nextStream = 1;

    private LeanGrpcClient(SocketChannel channel) {
        this.channel = channel;
    }

    static LeanGrpcClient connect(Path socket) throws IOException {
        SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        channel.connect(UnixDomainSocketAddress.of(socket));
        LeanGrpcClient client = new LeanGrpcClient(channel);
        ByteArrayOutputStream start = new ByteArrayOutputStream();
        start.writeBytes(PREFACE);
        ByteBuffer settings = ByteBuffer.allocate(6).putShort((short) SETTINGS_INITIAL_WINDOW_SIZE).putInt(WINDOW);
        frame(start, SETTINGS, 0, 0, settings.array());
        frame(start, WINDOW_UPDATE, 0, 0, ByteBuffer.allocate(4).putInt(WINDOW - 65_535).array());
        client.write(start.toByteArray());
        return client;
    }

    /** Calls {@code /service/method} with {@code request} and parses its one answer. */
    <T> T call(String fullMethod, MessageLite request, Parser<T> answer) throws IOException {
        int stream = nextStream;
        nextStream += 2;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream block = new ByteArrayOutputStream();
        literal(block, ":method", "POST");
        literal(block, ":scheme", "http");
        literal(block, ":path", "/" + fullMethod);
        literal(block, ":authority", "localhost");
        literal(block, "content-type", "application/grpc");
        literal(block, "te", "trailers");
        frame(out, HEADERS, END_HEADERS, stream, block.toByteArray());
        byte[] message = request.toByteArray();
        ByteBuffer data = ByteBuffer.allocate(5 + message.length).put((byte) 0).putInt(message.length).put(message);
        frame(out, DATA, END_STREAM, stream, data.array());
        write(out.toByteArray());

        ByteArrayOutputStream body = new ByteArrayOutputStream();
        while (true) {
            Frame frame = readFrame();
            switch (frame.type) {
                case SETTINGS, PING -> {
                    // each is answered with an ACK of the same type: a PING's with its payload
                    if ((frame.flags & ACK) == 0) {
                        ByteArrayOutputStream ack = new ByteArrayOutputStream();
                        frame(ack, frame.type, ACK, 0, frame.type == PING ? frame.payload : new byte[0]);
                        write(ack.toByteArray());
                    }
                }
                case GOAWAY -> throw new IOException("the server sent GOAWAY during " + fullMethod);
                case RST_STREAM -> {
                    if (frame.stream == stream) {
                        throw new IOException("the server reset the stream of " + fullMethod);
                    }
                }
                case DATA -> {
                    if (frame.stream == stream) {
                        body.writeBytes(unpadded(frame));
                    }
                }
                default -> {
                    // HEADERS (and CONTINUATION) are not decoded; WINDOW_UPDATE is not needed
                }
            }
            if (frame.stream == stream && (frame.flags & END_STREAM) != 0) {
                break;
            }
        }
        byte[] received = body.toByteArray();
        if (received.length < 5) {
            throw new IOException(fullMethod + " failed: the server answered with no message (a gRPC error status)");
        }
        int length = ByteBuffer.wrap(received, 1, 4).getInt();
        try {
            return answer.parseFrom(ByteBuffer.wrap(received, 5, length));
        } catch (InvalidProtocolBufferException e) {
            throw new IOException("cannot parse the answer of " + fullMethod, e);
        }
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }

    private record Frame(int type, int flags, int stream, byte[] payload) {
    }

    private Frame readFrame() throws IOException {
        fill(FRAME_HEADER);
        int length = (in.get() & 0xff) << 16 | (in.get() & 0xff) << 8 | (in.get() & 0xff);
        int type = in.get() & 0xff;
        int flags = in.get() & 0xff;
        int stream = in.getInt() & 0x7fffffff;
        fill(length);
        byte[] payload = new byte[length];
        in.get(payload);
        return new Frame(type, flags, stream, payload);
    }

    private static byte[] unpadded(Frame frame) {
        if ((frame.flags & PADDED) == 0) {
            return frame.payload;
        }
        int pad = frame.payload[0] & 0xff;
        byte[] data = new byte[frame.payload.length - 1 - pad];
        System.arraycopy(frame.payload, 1, data, 0, data.length);
        return data;
    }

    /** Until at least {@code bytes} are buffered. */
    private void fill(int bytes) throws IOException {
        while (in.remaining() < bytes) {
            in.compact();
            int read = channel.read(in);
            in.flip();
            if (read < 0) {
                throw new IOException("the server closed the connection");
            }
        }
    }

    private void write(byte[] bytes) throws IOException {
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        while (buffer.hasRemaining()) {
            channel.write(buffer);
        }
    }

    private static void frame(ByteArrayOutputStream out, int type, int flags, int stream, byte[] payload) {
        out.write(payload.length >>> 16);
        out.write(payload.length >>> 8);
        out.write(payload.length);
        out.write(type);
        out.write(flags);
        out.writeBytes(ByteBuffer.allocate(4).putInt(stream).array());
        out.writeBytes(payload);
    }

    /** A literal header field without indexing, with a literal name (first byte 0, 4-bit prefix). */
    private static void literal(ByteArrayOutputStream block, String name, String value) {
        block.write(0);
        string(block, name);
        string(block, value);
    }

    /** An HPACK string, not Huffman coded: its length as a 7-bit-prefix integer, then its octets. */
    private static void string(ByteArrayOutputStream block, String text) {
        byte[] octets = text.getBytes(StandardCharsets.UTF_8);
        int length = octets.length;
        if (length < 127) {
            block.write(length);
        } else {
            block.write(127);
            length -= 127;
            while (length >= 128) {
                block.write(length & 0x7f | 0x80);
                length >>>= 7;
            }
            block.write(length);
        }
        block.writeBytes(octets);
    }
}
