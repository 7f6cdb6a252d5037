import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

/**
 * The proof scripts/lib.sh asks of a JDK it fetched, before using it: compiled by that JDK's javac and
 * run by its java, it prints the runtime's version and how many certificate authorities the default
 * trust store holds. None is a failure: Maven reaches its repository over TLS with that store.
 *
 * <p>{@code --write-trust-store PEM OUT} first writes OUT, a PKCS12 trust store of the certificates in
 * the PEM bundle, readable without a password as the JDK's own cacerts is: for a machine where
 * ca-certificates-java made no /etc/ssl/certs/java/cacerts.
 */
final class JdkProbe {
    public static void main(String[] args) throws Exception {
        if (args.length == 3 && args[0].equals("--write-trust-store")) {
            writeTrustStore(args[1], args[2]);
        } else if (args.length != 0) {
            System.err.println("usage: JdkProbe [--write-trust-store PEM OUT]");
            System.exit(2);
        }
        TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        factory.init((KeyStore) null);
        int authorities = 0;
        for (TrustManager manager : factory.getTrustManagers()) {
            if (manager instanceof X509TrustManager x509) {
                authorities += x509.getAcceptedIssuers().length;
            }
        }
        if (authorities == 0) {
            System.err.println("the default trust store (" + System.getProperty("java.home") + "/lib/security/cacerts) holds no certificate authority");
            System.exit(1);
        }
        System.out.println("LVMQOS-JDK-PROBE version=" + Runtime.version() + " trusted-authorities=" + authorities);
    }

    private static void writeTrustStore(String pem, String out) throws Exception {
        // No password protects the entries or the store: the JDK reads its default trust store without one.
        System.setProperty("keystore.pkcs12.certProtectionAlgorithm", "NONE");
        System.setProperty("keystore.pkcs12.macAlgorithm", "NONE");
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        int index = 0;
        try (InputStream in = new FileInputStream(pem)) {
            for (Certificate certificate : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                store.setCertificateEntry("ca-" + index++, certificate);
            }
        }
        try (OutputStream stream = new FileOutputStream(out)) {
            store.store(stream, new char[0]);
        }
    }
}
