package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * deploy/snapshot-metadata: the external-snapshot-metadata sidecar beside the driver, the Service
 * and SnapshotMetadataService that name it, and its roles, consistent with each other and the base.
 */
class SnapshotMetadataDeployTest {

    private static final Path DIR = DeployTree.root().resolve("deploy/snapshot-metadata");
    private static final String TLS_MOUNT = "/etc/snapshot-metadata-tls";

    private final YamlNode kustomization = DeployTree.parse(DIR.resolve("kustomization.yaml")).getFirst();
    private final List<YamlNode> objects = objects();
    private final YamlNode sidecar = DeployTree.parse(DIR.resolve("daemonset-sidecar.yaml")).getFirst()
            .path("spec.template.spec").get("containers").items().getFirst();
    private final NodePod base = NodePod.fromBase();

    private List<YamlNode> objects() {
        List<YamlNode> all = new ArrayList<>();
        for (String resource : kustomization.get("resources").texts()) {
            if (!resource.startsWith("../")) {
                all.addAll(DeployTree.parse(DIR.resolve(resource)));
            }
        }
        return all;
    }

    @Test
    void theOverlayIsTheBasePlusItsOwnFiles() {
        assertTrue(kustomization.get("resources").texts().contains("../kubernetes"));
        assertEquals("lvmqos", kustomization.get("namespace").text());
        for (YamlNode patch : kustomization.get("patches").items()) {
            assertTrue(Files.isRegularFile(DIR.resolve(patch.get("path").text())), patch.toString());
        }
        YamlNode patched = DeployTree.parse(DIR.resolve("daemonset-sidecar.yaml")).getFirst();
        assertEquals(base.daemonSet.name(), patched.name(), "the patch names the base's DaemonSet");
    }

    @Test
    void theSidecarTalksToTheDriversSocketAndServesWithTheTlsSecret() {
        ImagesPinnedTest.assertPinned(sidecar.get("image").text(), "deploy/snapshot-metadata");
        assertTrue(NodePod.imageRepository(sidecar.get("image").text())
                .equals("registry.k8s.io/sig-storage/csi-snapshot-metadata"), sidecar.get("image").text());
        String socket = NodePod.requiredFlag(sidecar, "--csi-address");
        YamlNode socketMount = NodePod.mounts(sidecar).stream()
                .filter(m -> socket.startsWith(m.get("mountPath").text() + "/")).findFirst()
                .orElseThrow(() -> new AssertionError("the socket " + socket + " is in none of the sidecar's mounts"));
        String socketVolume = socketMount.get("name").text();
        assertTrue(base.volume(socketVolume).present(), "the base pod has the socket volume " + socketVolume);
        assertTrue(NodePod.mountAt(base.plugin(), socketMount.get("mountPath").text()).isPresent(),
                "the driver serves its socket in the same directory");

        assertTrue(NodePod.requiredFlag(sidecar, "--tls-cert").startsWith(TLS_MOUNT + "/"));
        assertTrue(NodePod.requiredFlag(sidecar, "--tls-key").startsWith(TLS_MOUNT + "/"));
        YamlNode tlsMount = NodePod.mountAt(sidecar, TLS_MOUNT).orElseThrow();
        assertTrue(tlsMount.get("readOnly").bool());
        YamlNode tlsVolume = DeployTree.parse(DIR.resolve("daemonset-sidecar.yaml")).getFirst()
                .path("spec.template.spec").get("volumes").items().stream()
                .filter(v -> v.get("name").text().equals(tlsMount.get("name").text())).findFirst().orElseThrow();
        assertEquals("lvmqos-snapshot-metadata-tls", tlsVolume.path("secret.secretName").text());
        assertFalse(sidecar.path("securityContext.allowPrivilegeEscalation").bool());
    }

    @Test
    void theSnapshotMetadataServiceNamesTheDriverAndTheServiceThatReachesTheSidecar() {
        YamlNode sms = DeployTree.only(objects, "SnapshotMetadataService");
        assertEquals(DeployTree.DRIVER_NAME, sms.name(), "clients find it by the driver's name");
        YamlNode service = DeployTree.only(objects, "Service");
        YamlNode port = service.path("spec.ports").items().getFirst();
        assertEquals(service.name() + "." + kustomization.get("namespace").text() + ":" + port.get("port").value(),
                sms.path("spec.address").text());
        assertFalse(sms.path("spec.audience").text().isEmpty());
        assertTrue(sms.path("spec.caCert").text().matches("[A-Za-z0-9+/=]+"), "caCert is base64");

        assertEquals(base.daemonSet.path("spec.template.metadata.labels").map(),
                service.path("spec.selector").map(), "the Service selects the node pods");
        String targetPort = port.get("targetPort").text();
        assertTrue(sidecar.get("ports").items().stream().anyMatch(p -> p.get("name").text().equals(targetPort)),
                "the Service's target port is the sidecar's " + targetPort);
    }

    @Test
    void theSidecarsRoleReadsAndReviewsButChangesNothing() {
        YamlNode role = DeployTree.named(objects, "ClusterRole", "lvmqos-snapshot-metadata");
        List<String> writes = new ArrayList<>();
        for (YamlNode rule : role.get("rules").items()) {
            for (String verb : rule.get("verbs").texts()) {
                assertFalse(verb.contains("*"));
                if (!Set.of("get", "list", "watch").contains(verb)) {
                    writes.add(verb + " " + rule.get("resources").texts());
                }
            }
        }
        assertEquals(List.of("create [tokenreviews]", "create [subjectaccessreviews]"), writes);
        YamlNode binding = DeployTree.named(objects, "ClusterRoleBinding", "lvmqos-snapshot-metadata");
        assertEquals(base.spec.get("serviceAccountName").text(), binding.get("subjects").items().getFirst()
                .get("name").text(), "bound to the node pod's service account, which the sidecar runs as");
    }
}
