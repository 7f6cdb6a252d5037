package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class CsiDriverManifestTest {

    private final YamlNode driver = DeployTree.only(DeployTree.base(), "CSIDriver");

    @Test
    void isNamedAfterTheDriver() {
        assertEquals(DeployTree.DRIVER_NAME, driver.name());
    }

    @Test
    void needsNoAttachForLocalVolumes() {
        assertFalse(driver.path("spec.attachRequired").bool());
    }

    @Test
    void passesPodInfoOnMountBecausePublishNeedsThePodUid() {
        assertTrue(driver.path("spec.podInfoOnMount").bool());
    }

    @Test
    void letsTheSchedulerSeeStorageCapacity() {
        assertTrue(driver.path("spec.storageCapacity").bool());
    }

    @Test
    void letsKubeletApplyFsGroupToTheFilesystem() {
        assertEquals("File", driver.path("spec.fsGroupPolicy").text());
    }

    @Test
    void servesPersistentVolumesOnly() {
        assertEquals(List.of("Persistent"), driver.path("spec.volumeLifecycleModes").texts());
    }
}
