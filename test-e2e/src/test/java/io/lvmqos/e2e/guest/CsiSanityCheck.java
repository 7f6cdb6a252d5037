package io.lvmqos.e2e.guest;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lvmqos.e2e.uml.GuestEnv;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Runs the user's csi-sanity binary against the driver in the guest. Staging and target
 * directories are under the driver's kubelet directory but not in the pods/<uid>/volumes layout,
 * so the QoS parameters of the test volumes are validated and stored but not applied. Volumes are
 * thin because csi-sanity snapshots and clones whatever it creates.
 */
public class CsiSanityCheck {

    /** Guest environment variables set by CsiSanityIT. */
    public static final String BINARY = "LVMQOS_CSI_SANITY";
    public static final String EXTRA_ARGS = "LVMQOS_CSI_SANITY_ARGS";
    public static final long EXTENT = 4L << 20;

    @Test
    void csiSanityPasses() throws Exception {
        GuestEnv.assumeInGuest();
        Path binary = Path.of(System.getenv(BINARY));
        Path out = GuestEnv.outDir();
        Path parameters = out.resolve("test-volume-parameters.yaml");
        Files.writeString(parameters, """
                lvmType: thin
                readIOPS: "200"
                writeBPS: 8Mi
                csi.storage.k8s.io/pvc/name: csi-sanity
                """);
        Path mutable = out.resolve("test-volume-mutable-parameters.yaml");
        Files.writeString(mutable, """
                writeBPS: 16Mi
                readIOPS: "400"
                """);
        try (GuestDriver driver = GuestDriver.start()) {
            // csi-sanity makes its target and staging directories with mkdir, not mkdir -p
            Files.createDirectories(GuestDriver.KUBELET.resolve("csi-sanity"));
            List<String> command = new ArrayList<>(List.of(binary.toString(),
                    "--csi.endpoint=" + GuestDriver.SOCKET,
                    "--csi.stagingdir=" + GuestDriver.KUBELET.resolve("csi-sanity/staging"),
                    "--csi.mountdir=" + GuestDriver.KUBELET.resolve("csi-sanity/target"),
                    "--csi.testvolumeparameters=" + parameters,
                    "--csi.testvolumemutableparameters=" + mutable,
                    "--csi.testvolumesize=" + 4 * EXTENT,
                    "--csi.testvolumeexpandsize=" + 8 * EXTENT,
                    "--ginkgo.no-color",
                    "--ginkgo.v"));
            String extra = System.getenv(EXTRA_ARGS);
            if (extra != null && !extra.isBlank()) {
                command.addAll(List.of(extra.strip().split("\\s+")));
            }
            Path report = out.resolve("csi-sanity.log");
            Process sanity = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(report.toFile()).start();
            if (!sanity.waitFor(40, TimeUnit.MINUTES)) {
                sanity.destroyForcibly();
            }
            assertEquals(0, sanity.exitValue(), "csi-sanity failed; its output is in " + report);
        }
    }
}
