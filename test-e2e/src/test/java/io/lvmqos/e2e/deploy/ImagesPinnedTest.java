package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** Every image is a fixed version: a :latest or untagged image changes under a running cluster. */
class ImagesPinnedTest {

    /** A tag that names a release (v1.2.3, 1.37.0), or a digest. */
    private static final Pattern PINNED = Pattern.compile(".+(:v?[0-9]+\\.[0-9]+\\.[0-9]+(-[A-Za-z0-9.]+)?|@sha256:[0-9a-f]{64})");

    static void assertPinned(String image, String where) {
        assertTrue(PINNED.matcher(image).matches(), where + ": image " + image + " is not pinned to a release");
        assertFalse(image.endsWith(":latest"), where + ": " + image);
    }

    @Test
    void baseImagesArePinned() {
        List<String> images = NodePod.images(DeployTree.base());
        assertFalse(images.isEmpty());
        images.forEach(image -> assertPinned(image, "deploy/kubernetes"));
    }

    @Test
    void kustomizationImageOverrideIsPinned() {
        for (YamlNode image : DeployTree.kustomization().get("images").items()) {
            String name = image.get("newName").optionalText().orElse(image.get("name").text());
            String tag = String.valueOf(image.get("newTag").value());
            assertPinned(name + ":" + tag, image.where());
        }
    }

    @Test
    void sidecarsComeFromTheKubernetesCsiRegistry() {
        Set<String> sidecars = new TreeSet<>();
        for (YamlNode container : NodePod.fromBase().containers()) {
            if (!NodePod.name(container).equals(NodePod.PLUGIN)) {
                sidecars.add(NodePod.imageRepository(container.get("image").text()));
            }
        }
        assertEquals(Set.of(
                "registry.k8s.io/sig-storage/csi-node-driver-registrar",
                "registry.k8s.io/sig-storage/csi-provisioner",
                "registry.k8s.io/sig-storage/csi-snapshotter",
                "registry.k8s.io/sig-storage/csi-resizer",
                "registry.k8s.io/sig-storage/livenessprobe"), sidecars);
    }

    @Test
    void pluginAndInitContainerRunTheSameDriverImage() {
        NodePod pod = NodePod.fromBase();
        assertEquals(pod.plugin().get("image").text(), pod.container("lvm-config").get("image").text(),
                "the LVM configuration must be merged by the same lvm2 that will read it");
    }

    @Test
    void exampleImagesArePinned() {
        NodePod.images(DeployTree.examples()).forEach(image -> assertPinned(image, "deploy/examples"));
    }
}
