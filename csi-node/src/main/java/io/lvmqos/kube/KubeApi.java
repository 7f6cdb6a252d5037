package io.lvmqos.kube;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.StringReader;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;

/**
 * The Kubernetes API server, as far as the watcher needs it: GET requests over HTTP/1.1 on a
 * socket of their own, answered as a stream the caller reads as it arrives. A plain socket rather
 * than the JDK's HTTP client: a read timeout is the socket's (a watch on a server that stopped
 * answering ends), a chunked watch stream is read event by event, and no selector thread or
 * buffer pool stays behind. Each request has its own connection ({@code Connection: close}); the
 * JDK resumes TLS sessions, so a page costs the API server no full handshake.
 *
 * <p>In a pod: {@code https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT}, the service
 * account's CA, and its token, read again at every request (kubelet rotates bound tokens in
 * place). {@code KUBERNETES_MASTER} (an http or https URL, which the fabric8 client this replaced
 * honoured too) points it elsewhere, for benchmarks and a driver run by hand.
 */
final class KubeApi {

    static final Path SERVICE_ACCOUNT = Path.of("/var/run/secrets/kubernetes.io/serviceaccount");

    /**
     * @param tokenFile read at every request; absent sends no Authorization
     * @param caFile PEM certificates the server's must chain to; absent trusts the JDK's
     * @param connect the TCP and TLS connect timeout
     * @param read the longest silence while a response's headers or body are read
     */
    record Config(URI server, Optional<Path> tokenFile, Optional<Path> caFile, Duration connect, Duration read) {
        Config {
            Objects.requireNonNull(server);
            Objects.requireNonNull(tokenFile);
            Objects.requireNonNull(caFile);
            Objects.requireNonNull(connect);
            Objects.requireNonNull(read);
            if (!"http".equals(server.getScheme()) && !"https".equals(server.getScheme())) {
                throw new IllegalArgumentException("the API server's URL must be http or https: " + server);
            }
            if (server.getHost() == null) {
                throw new IllegalArgumentException("the API server's URL has no host: " + server);
            }
        }

        Config withRead(Duration read) {
            return new Config(server, tokenFile, caFile, connect, read);
        }

        /** From the pod's environment, as described on the class. */
        static Config fromEnvironment(Map<String, String> env, Path serviceAccount) {
            Path token = serviceAccount.resolve("token");
            Path ca = serviceAccount.resolve("ca.crt");
            Optional<Path> tokenFile = Optional.of(token).filter(Files::isReadable);
            Optional<Path> caFile = Optional.of(ca).filter(Files::isReadable);
            Duration connect = Duration.ofSeconds(10);
            Duration read = Duration.ofSeconds(60);
            String master = env.getOrDefault("KUBERNETES_MASTER", "").strip();
            if (!master.isEmpty()) {
                return new Config(URI.create(master), tokenFile, caFile, connect, read);
            }
            String host = env.getOrDefault("KUBERNETES_SERVICE_HOST", "").strip();
            String port = env.getOrDefault("KUBERNETES_SERVICE_PORT", "").strip();
            if (host.isEmpty() || port.isEmpty()) {
                throw new IllegalStateException("not in a pod (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT"
                        + " are not set) and no KUBERNETES_MASTER given: --watch-kubernetes cannot reach an API server");
            }
            String bracketed = host.contains(":") ? "[" + host + "]" : host;
            return new Config(URI.create("https://" + bracketed + ":" + port), tokenFile, Optional.of(ca), connect,
                    read);
        }
    }

    /** The API server answered something other than 200; {@code reason} is its Status's, when it sent one. */
    static final class Refused extends IOException {
        private final int code;
        private final String reason;

        Refused(int code, String reason, String message) {
            super("HTTP " + code + (reason.isEmpty() ? "" : " " + reason) + (message.isEmpty() ? "" : ": " + message));
            this.code = code;
            this.reason = reason;
        }

        int code() {
            return code;
        }

        String reason() {
            return reason;
        }
    }

    /** A response's body as characters, open until closed; closing it closes the connection. */
    interface Body extends AutoCloseable {
        JsonStream json(String what);

        @Override
        void close();
    }

    private final Config config;
    /** Present for an https server. */
    private final Optional<SSLSocketFactory> tls;

    KubeApi(Config config) throws GeneralSecurityException, IOException {
        this.config = config;
        this.tls = "https".equals(config.server().getScheme()) ? tls(config.caFile()) : Optional.empty();
    }

    Config config() {
        return config;
    }

    /**
     * Sends a GET for {@code pathAndQuery} and returns once the headers of a 200 have arrived.
     *
     * @param opened told of the socket before anything is read, so that another thread can close it
     * @throws Refused for any other status, with the Status the server sent
     */
    Body get(String pathAndQuery, Duration read, Consumer<Socket> opened)
            throws IOException {
        URI server = config.server();
        int port = server.getPort() >= 0 ? server.getPort() : "https".equals(server.getScheme()) ? 443 : 80;
        String host = server.getHost().replaceAll("^\\[|]$", "");
        Socket plain = new Socket();
        opened.accept(plain);
        Socket socket = plain;
        try {
            plain.connect(new InetSocketAddress(host, port), (int) config.connect().toMillis());
            plain.setSoTimeout((int) config.connect().toMillis());
            if (tls.isPresent()) {
                SSLSocket layered = (SSLSocket) tls.get().createSocket(plain, host, port, true);
                SSLParameters parameters = layered.getSSLParameters();
                // the server's certificate must name the host (or IP) it was reached at
                parameters.setEndpointIdentificationAlgorithm("HTTPS");
                layered.setSSLParameters(parameters);
                socket = layered;
                layered.startHandshake();
            }
            socket.setSoTimeout((int) read.toMillis());
            OutputStream out = socket.getOutputStream();
            StringBuilder request = new StringBuilder(256).append("GET ").append(pathAndQuery)
                    .append(" HTTP/1.1\r\nHost: ").append(server.getHost());
            if (server.getPort() >= 0) {
                request.append(':').append(server.getPort());
            }
            request.append("\r\nAccept: application/json\r\nUser-Agent: lvmqos\r\nConnection: close\r\n");
            Optional<String> token = token();
            token.ifPresent(t -> request.append("Authorization: Bearer ").append(t).append("\r\n"));
            request.append("\r\n");
            out.write(request.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            InputStream in = new BufferedInputStream(socket.getInputStream(), 8192);
            int status = statusLine(in);
            long length = -1;
            boolean chunked = false;
            for (String header = line(in); !header.isEmpty(); header = line(in)) {
                int colon = header.indexOf(':');
                if (colon <= 0) {
                    throw new IOException("a malformed response header: " + header);
                }
                String name = header.substring(0, colon).strip().toLowerCase(Locale.ROOT);
                String value = header.substring(colon + 1).strip();
                if (name.equals("content-length")) {
                    length = contentLength(value);
                } else if (name.equals("transfer-encoding")) {
                    chunked = value.toLowerCase(Locale.ROOT).contains("chunked");
                }
            }
            InputStream body = chunked ? new Chunked(in) : length >= 0 ? new Bounded(in, length) : in;
            if (status != 200) {
                throw refusal(status, body);
            }
            Socket connection = socket;
            return new Body() {
                @Override
                public JsonStream json(String what) {
                    return new JsonStream(new InputStreamReader(body, StandardCharsets.UTF_8), what);
                }

                @Override
                public void close() {
                    closeQuietly(connection);
                }
            };
        } catch (IOException | RuntimeException e) {
            closeQuietly(socket);
            closeQuietly(plain);
            throw e;
        }
    }

    private static long contentLength(String value) throws IOException {
        try {
            long length = Long.parseLong(value);
            if (length >= 0) {
                return length;
            }
        } catch (NumberFormatException e) {
            // refused below
        }
        throw new IOException("a malformed Content-Length: " + value);
    }

    private Optional<String> token() throws IOException {
        if (config.tokenFile().isEmpty()) {
            return Optional.empty();
        }
        String token = Files.readString(config.tokenFile().get(), StandardCharsets.UTF_8).strip();
        if (token.isEmpty() || token.chars().anyMatch(c -> c < 0x21 || c > 0x7e)) {
            throw new IOException("the token in " + config.tokenFile().get() + " is empty or not printable ASCII");
        }
        return Optional.of(token);
    }

    /** Reads the Status of a refusal, at most 64 KiB of it. */
    private static Refused refusal(int status, InputStream body) {
        String reason = "";
        String message = "";
        try {
            byte[] bytes = body.readNBytes(64 * 1024);
            String text = new String(bytes, StandardCharsets.UTF_8);
            String[] found = {"", ""};
            try {
                JsonStream json = new JsonStream(new StringReader(text), "a Status");
                json.object(name -> {
                    switch (name) {
                        case "reason" -> found[0] = json.string();
                        case "message" -> found[1] = json.string();
                        default -> json.skip();
                    }
                });
            } catch (IOException notAStatus) {
                found[1] = text.length() > 200 ? text.substring(0, 200) + "…" : text;
            }
            reason = found[0];
            message = found[1].strip();
        } catch (IOException unread) {
            message = "(body unread: " + unread.getMessage() + ")";
        }
        return new Refused(status, reason, message);
    }

    private static int statusLine(InputStream in) throws IOException {
        String line = line(in);
        String[] parts = line.split(" ", 3);
        if (parts.length < 2 || !parts[0].startsWith("HTTP/1.")) {
            throw new IOException("not an HTTP/1.x status line: " + line);
        }
        try {
            return Integer.parseInt(parts[1]);
        } catch (NumberFormatException e) {
            throw new IOException("not an HTTP/1.x status line: " + line);
        }
    }

    /** One CRLF-ended line of ASCII, without its end; 8 KiB at most. */
    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream(64);
        while (true) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("the connection ended inside the response's head");
            }
            if (b == '\n') {
                byte[] bytes = out.toByteArray();
                int n = bytes.length > 0 && bytes[bytes.length - 1] == '\r' ? bytes.length - 1 : bytes.length;
                return new String(bytes, 0, n, StandardCharsets.ISO_8859_1);
            }
            if (out.size() >= 8192) {
                throw new IOException("a response header line longer than 8 KiB");
            }
            out.write(b);
        }
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing is all that is left to do
        }
    }

    private static Optional<SSLSocketFactory> tls(Optional<Path> caFile) throws GeneralSecurityException, IOException {
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        if (caFile.isPresent()) {
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            int n = 0;
            try (InputStream pem = Files.newInputStream(caFile.get())) {
                for (Certificate certificate : CertificateFactory.getInstance("X.509").generateCertificates(pem)) {
                    store.setCertificateEntry("ca-" + n++, certificate);
                }
            }
            if (n == 0) {
                throw new GeneralSecurityException("no certificate in " + caFile.get());
            }
            trust.init(store);
        } else {
            trust.init((KeyStore) null);
        }
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trust.getTrustManagers(), null);
        return Optional.of(context.getSocketFactory());
    }

    /** A body whose bytes are read in runs; the single-byte read is one of them. */
    private abstract static class BodyStream extends FilterInputStream {
        BodyStream(InputStream in) {
            super(in);
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }
    }

    /** A body of a known length. */
    private static final class Bounded extends BodyStream {
        private long left;

        Bounded(InputStream in, long length) {
            super(in);
            this.left = length;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (left <= 0) {
                return -1;
            }
            int n = in.read(b, off, (int) Math.min(len, left));
            if (n < 0) {
                throw new IOException("the connection ended " + left + " bytes before the body's end");
            }
            left -= n;
            return n;
        }
    }

    /** HTTP/1.1 chunked transfer coding (RFC 9112 section 7.1), trailers read and dropped. */
    private static final class Chunked extends BodyStream {
        private long left;
        private boolean done;

        Chunked(InputStream in) {
            super(in);
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (done) {
                return -1;
            }
            if (left == 0) {
                String size = line(in);
                int semicolon = size.indexOf(';');
                try {
                    left = Long.parseLong((semicolon < 0 ? size : size.substring(0, semicolon)).strip(), 16);
                } catch (NumberFormatException e) {
                    throw new IOException("a malformed chunk size: " + size);
                }
                if (left < 0) {
                    throw new IOException("a malformed chunk size: " + size);
                }
                if (left == 0) {
                    for (String trailer = line(in); !trailer.isEmpty(); trailer = line(in)) {
                        // trailers carry nothing the watcher reads
                    }
                    done = true;
                    return -1;
                }
            }
            int n = in.read(b, off, (int) Math.min(len, left));
            if (n < 0) {
                throw new IOException("the connection ended inside a chunk");
            }
            left -= n;
            if (left == 0 && !line(in).isEmpty()) {
                throw new IOException("a chunk does not end in CRLF");
            }
            return n;
        }
    }
}
