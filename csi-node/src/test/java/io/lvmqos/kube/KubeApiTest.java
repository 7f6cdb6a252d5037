package io.lvmqos.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where the client finds the API server, and TLS to it as in a pod: the service account's CA, the certificate's name checked. */
class KubeApiTest {

    @TempDir
    Path dir;

    @Test
    void inAPodTheServiceAddressTheCaAndTheTokenAreUsed() throws IOException {
        Files.writeString(dir.resolve("token"), "t");
        Files.writeString(dir.resolve("ca.crt"), "");
        KubeApi.Config config = KubeApi.Config.fromEnvironment(
                Map.of("KUBERNETES_SERVICE_HOST", "10.96.0.1", "KUBERNETES_SERVICE_PORT", "443"), dir);
        assertEquals(URI.create("https://10.96.0.1:443"), config.server());
        assertEquals(Optional.of(dir.resolve("token")), config.tokenFile());
        assertEquals(Optional.of(dir.resolve("ca.crt")), config.caFile());
        assertEquals(URI.create("https://[fd00::1]:6443"), KubeApi.Config.fromEnvironment(
                Map.of("KUBERNETES_SERVICE_HOST", "fd00::1", "KUBERNETES_SERVICE_PORT", "6443"), dir).server());
    }

    @Test
    void kubernetesMasterPointsItElsewhere() {
        KubeApi.Config config = KubeApi.Config.fromEnvironment(Map.of("KUBERNETES_MASTER", "http://127.0.0.1:8001",
                "KUBERNETES_SERVICE_HOST", "10.96.0.1", "KUBERNETES_SERVICE_PORT", "443"), dir);
        assertEquals(URI.create("http://127.0.0.1:8001"), config.server());
        assertEquals(Optional.empty(), config.tokenFile(), "no service account here");
    }

    @Test
    void outsideAPodWithoutKubernetesMasterItSaysSo() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> KubeApi.Config.fromEnvironment(Map.of(), dir));
        assertTrue(e.getMessage().contains("KUBERNETES_MASTER"), e.getMessage());
    }

    @Test
    void tlsTrustsTheServiceAccountsCaAndChecksTheName() throws Exception {
        // a self-signed certificate for 127.0.0.1, as a cluster's CA signs the API server's for its service IP
        Path keys = dir.resolve("server.p12");
        keytool("-genkeypair", "-alias", "api", "-keyalg", "EC", "-dname", "CN=kube-apiserver", "-ext",
                "SAN=ip:127.0.0.1", "-validity", "2", "-keypass", "changeit", "-storetype", "PKCS12", "-keystore", keys.toString());
        Path ca = dir.resolve("ca.crt");
        keytool("-exportcert", "-rfc", "-alias", "api", "-keystore", keys.toString(), "-file", ca.toString());
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = new FileInputStream(keys.toFile())) {
            store.load(in, "changeit".toCharArray());
        }
        KeyManagerFactory keyManagers = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keyManagers.init(store, "changeit".toCharArray());
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(keyManagers.getKeyManagers(), null, null);
        HttpsServer server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setHttpsConfigurator(new HttpsConfigurator(context));
        server.createContext("/api/v1/persistentvolumes", exchange -> {
            byte[] body = ("{\"auth\":\"" + exchange.getRequestHeaders().getFirst("Authorization") + "\"}")
                    .getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
        try {
            int port = server.getAddress().getPort();
            Path token = Files.writeString(dir.resolve("token"), "secret\n");
            KubeApi api = new KubeApi(new KubeApi.Config(URI.create("https://127.0.0.1:" + port), Optional.of(token),
                    Optional.of(ca), Duration.ofSeconds(5), Duration.ofSeconds(5)));
            try (KubeApi.Body body = api.get("/api/v1/persistentvolumes", Duration.ofSeconds(5), socket -> { })) {
                String[] auth = {""};
                JsonStream json = body.json("a test");
                json.object(name -> auth[0] = json.string());
                assertEquals("Bearer secret", auth[0]);
            }
            // the same certificate reached by a name it does not carry
            KubeApi byName = new KubeApi(new KubeApi.Config(URI.create("https://localhost:" + port), Optional.empty(),
                    Optional.of(ca), Duration.ofSeconds(5), Duration.ofSeconds(5)));
            assertThrows(SSLHandshakeException.class,
                    () -> byName.get("/api/v1/persistentvolumes", Duration.ofSeconds(5), socket -> { }).close());
        } finally {
            server.stop(0);
        }
    }

    private static void keytool(String... args) throws Exception {
        List<String> argv = new ArrayList<>();
        argv.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        argv.addAll(List.of(args));
        argv.addAll(List.of("-storepass", "changeit", "-noprompt"));
        Process keytool = new ProcessBuilder(argv).redirectErrorStream(true).start();
        String out = new String(keytool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(keytool.waitFor(60, TimeUnit.SECONDS), "keytool did not end");
        assertEquals(0, keytool.exitValue(), out);
    }
}
