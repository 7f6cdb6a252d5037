package io.lvmqos.e2e.guest;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lvmqos.e2e.uml.GuestEnv;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Runs the user's csi-sanity binary against the driver in the guest. Its staging directory is one
 * of kubelet's staging paths, and its mount directory a pod's CSI volume directory (csi-sanity
 * publishes to {@code <mountdir>/target}), the only places the driver takes; the pod's cgroup is
 * made first, so the test volumes' QoS parameters are applied as they would be for a real pod.
 * Volumes are thin because csi-sanity snapshots and clones whatever it creates.
 */
public class CsiSanityCheck {

    @RegisterExtension
    static final DriverForTheClass driverPerTest = new DriverForTheClass().startedByEachTest();

    /** Guest environment variables set by CsiSanityIT. */
    public static final String BINARY = "LVMQOS_CSI_SANITY";
    public static final String EXTRA_ARGS = "LVMQOS_CSI_SANITY_ARGS";
    public static final long EXTENT = 4L << 20;

    /** Where kubelet would stage a volume whose handle hashes to this (64 hex digits, as kubelet's sha256). */
    static Path stagingDir(Path kubelet) {
        return kubelet.resolve("plugins/kubernetes.io/csi/lvmqos.csi.io").resolve("5a".repeat(32)).resolve("globalmount");
    }

    /** A pod's CSI volume directory, the parent of csi-sanity's targets. */
    static Path mountDir(Path kubelet, String podUid) {
        return kubelet.resolve("pods").resolve(podUid).resolve("volumes/kubernetes.io~csi/pv-csi-sanity");
    }

    /** The pod's cgroup as kubelet's systemd driver names it, for a burstable pod on cgroup v2. */
    static Path podCgroup(String podUid) {
        return GuestEnv.cgroupRoot().resolve("kubepods.slice/kubepods-burstable.slice")
                .resolve("kubepods-burstable-pod" + podUid.replace('-', '_') + ".slice");
    }

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
        String podUid = java.util.UUID.randomUUID().toString();
        Files.createDirectories(podCgroup(podUid));
        try (GuestDriver driver = driverPerTest.start()) {
            // csi-sanity makes its target and staging directories with mkdir, not mkdir -p
            Files.createDirectories(stagingDir(GuestDriver.KUBELET).getParent());
            Files.createDirectories(mountDir(GuestDriver.KUBELET, podUid).getParent());
            List<String> command = new ArrayList<>(List.of(binary.toString(),
                    "--csi.endpoint=" + GuestDriver.SOCKET,
                    "--csi.stagingdir=" + stagingDir(GuestDriver.KUBELET),
                    "--csi.mountdir=" + mountDir(GuestDriver.KUBELET, podUid),
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
