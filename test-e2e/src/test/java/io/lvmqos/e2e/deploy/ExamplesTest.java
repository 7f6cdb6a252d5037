package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.volume.VolumeParameters;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The examples an operator copies: classes the driver accepts, and a claim and pod that use them. */
class ExamplesTest {

    private final List<YamlNode> examples = DeployTree.examples();

    /** A StorageClass's parameters as the API server stores them: every value a string. */
    static Map<String, String> parameters(YamlNode storageClass) {
        Map<String, String> parameters = new LinkedHashMap<>();
        storageClass.get("parameters").map().forEach((key, value) -> {
            if (!(value instanceof String text)) {
                throw new AssertionError(storageClass.where() + " parameter " + key + "=" + value
                        + " is not a string: the API server refuses it (quote it)");
            }
            parameters.put((String) key, text);
        });
        return parameters;
    }

    private List<YamlNode> storageClasses() {
        return DeployTree.ofKind(examples, "StorageClass");
    }

    @Test
    void everyStorageClassIsAcceptedByTheDriversValidator() {
        assertFalse(storageClasses().isEmpty());
        for (YamlNode storageClass : storageClasses()) {
            Map<String, String> parameters = parameters(storageClass);
            assertDoesNotThrow(() -> VolumeParameters.parse(parameters), storageClass.name() + " " + parameters);
        }
    }

    @Test
    void everyStorageClassIsThisDriversWaitsForTheConsumerAndCanGrow() {
        for (YamlNode storageClass : storageClasses()) {
            assertEquals(DeployTree.DRIVER_NAME, storageClass.get("provisioner").text(), storageClass.name());
            assertEquals("WaitForFirstConsumer", storageClass.get("volumeBindingMode").text(), storageClass.name());
            assertTrue(storageClass.get("allowVolumeExpansion").bool(), storageClass.name());
        }
    }

    @Test
    void classesCoverEachKindOfLimitAndThinVolumes() {
        Map<String, Set<String>> keys = storageClasses().stream().collect(Collectors.toMap(YamlNode::name,
                sc -> parameters(sc).keySet()));
        assertTrue(keys.values().stream().anyMatch(k -> k.containsAll(Set.of("readIOPS", "writeIOPS"))), "gold " + keys);
        assertTrue(keys.values().stream().anyMatch(k -> k.contains("bps")), "silver " + keys);
        assertTrue(keys.values().stream().anyMatch(k -> k.contains("iopsPerGiB")), "per GiB " + keys);
        assertTrue(storageClasses().stream().anyMatch(sc -> "thin".equals(parameters(sc).get("lvmType"))),
                "thin " + keys);
    }

    @Test
    void snapshotClassIsThisDrivers() {
        YamlNode snapshotClass = DeployTree.only(examples, "VolumeSnapshotClass");
        assertEquals(DeployTree.DRIVER_NAME, snapshotClass.get("driver").text());
    }

    @Test
    void groupSnapshotClassIsThisDrivers() {
        YamlNode groupClass = DeployTree.only(examples, "VolumeGroupSnapshotClass");
        assertEquals(DeployTree.DRIVER_NAME, groupClass.get("driver").text());
        assertEquals(RbacTest.GROUP_SNAPSHOT_API, groupClass.get("apiVersion").text());
    }

    @Test
    void claimsUseExampleClassesAndThePodUsesAClaim() {
        Set<String> classes = storageClasses().stream().map(YamlNode::name).collect(Collectors.toSet());
        List<YamlNode> claims = DeployTree.ofKind(examples, "PersistentVolumeClaim");
        assertFalse(claims.isEmpty());
        for (YamlNode claim : claims) {
            assertTrue(classes.contains(claim.path("spec.storageClassName").text()), claim.where());
        }
        Set<String> claimNames = claims.stream().map(YamlNode::name).collect(Collectors.toSet());
        YamlNode pod = DeployTree.only(examples, "Pod");
        List<String> used = pod.path("spec.volumes").items().stream()
                .map(v -> v.path("persistentVolumeClaim.claimName").text()).toList();
        assertFalse(used.isEmpty());
        assertTrue(claimNames.containsAll(used), "pod uses " + used + ", claims are " + claimNames);
    }

    @Test
    void restoresComeFromThinClassesOnly() {
        Map<String, YamlNode> classes = storageClasses().stream().collect(Collectors.toMap(YamlNode::name, sc -> sc));
        for (YamlNode claim : DeployTree.ofKind(examples, "PersistentVolumeClaim")) {
            if (claim.path("spec.dataSource").present()) {
                YamlNode storageClass = classes.get(claim.path("spec.storageClassName").text());
                assertEquals("thin", parameters(storageClass).get("lvmType"),
                        claim.name() + ": snapshots and clones are thin snapshots of thin volumes");
            }
        }
    }

    @Test
    void examplesAreNotPartOfTheBase() {
        assertTrue(DeployTree.ofKind(DeployTree.base(), "StorageClass").isEmpty());
        assertTrue(DeployTree.ofKind(DeployTree.base(), "PersistentVolumeClaim").isEmpty());
    }
}
