package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** Each sidecar gets what it uses and nothing this driver never needs. */
class RbacTest {

    /** The group snapshot API the examples and the chart write, GA since external-snapshotter v8.6.0. */
    static final String GROUP_SNAPSHOT_API = "groupsnapshot.storage.k8s.io/v1";
    /** The first csi-snapshotter that watches VolumeGroupSnapshotContents as v1 (v8.4 and v8.5: v1beta2). */
    static final List<Integer> FIRST_V1_SNAPSHOTTER = List.of(8, 6, 0);

    private final List<YamlNode> base = DeployTree.base();
    private final NodePod pod = NodePod.fromBase();

    /** "verb resource" pairs of a role, e.g. "get storage.k8s.io/storageclasses". */
    private static Set<String> grants(YamlNode role) {
        Set<String> grants = new TreeSet<>();
        for (YamlNode rule : role.get("rules").items()) {
            for (String group : rule.get("apiGroups").texts()) {
                for (String resource : rule.get("resources").texts()) {
                    for (String verb : rule.get("verbs").texts()) {
                        grants.add(verb + " " + (group.isEmpty() ? "" : group + "/") + resource);
                    }
                }
            }
        }
        return grants;
    }

    private Set<String> grants(String kind, String name) {
        return grants(DeployTree.named(base, kind, name));
    }

    private static void assertGrants(Set<String> grants, String verbs, String resource) {
        for (String verb : verbs.split(",")) {
            assertTrue(grants.contains(verb + " " + resource), "missing " + verb + " " + resource + " in " + grants);
        }
    }

    @Test
    void noRoleUsesWildcards() {
        for (YamlNode role : base) {
            if (role.kind().equals("ClusterRole") || role.kind().equals("Role")) {
                for (String grant : grants(role)) {
                    assertFalse(grant.contains("*"), role.name() + ": " + grant);
                }
            }
        }
    }

    @Test
    void provisionerCanProvisionWithTopology() {
        Set<String> grants = grants("ClusterRole", "lvmqos-provisioner");
        assertGrants(grants, "get,list,watch,create,delete", "persistentvolumes");
        assertGrants(grants, "get,list,watch,update", "persistentvolumeclaims");
        assertGrants(grants, "get,list,watch", "storage.k8s.io/storageclasses");
        assertGrants(grants, "create,patch", "events");
        assertGrants(grants, "get,list,watch", "storage.k8s.io/csinodes");
        assertGrants(grants, "get,list,watch", "nodes");
        assertGrants(grants, "get", "snapshot.storage.k8s.io/volumesnapshots");
        assertGrants(grants, "get", "snapshot.storage.k8s.io/volumesnapshotcontents");
    }

    @Test
    void provisionerManagesCapacityObjectsInItsNamespaceOnly() {
        YamlNode role = DeployTree.named(base, "Role", "lvmqos-provisioner");
        assertEquals(pod.daemonSet.path("metadata.namespace").text(), role.path("metadata.namespace").text());
        Set<String> grants = grants(role);
        assertGrants(grants, "get,list,watch,create,update,patch,delete", "storage.k8s.io/csistoragecapacities");
        assertGrants(grants, "get", "pods");
        assertFalse(grants("ClusterRole", "lvmqos-provisioner").stream().anyMatch(g -> g.endsWith("csistoragecapacities")),
                "capacity objects are namespaced: no cluster-wide grant");
    }

    /** Granted in the base; the gate that turns group snapshots on is a value of its own (MixedClusterDefaultsTest). */
    @Test
    void snapshotterCanServeGroupSnapshots() {
        Set<String> grants = grants("ClusterRole", "lvmqos-snapshotter");
        assertGrants(grants, "get,list,watch", "groupsnapshot.storage.k8s.io/volumegroupsnapshotclasses");
        assertGrants(grants, "get,list,watch,update,patch", "groupsnapshot.storage.k8s.io/volumegroupsnapshotcontents");
        assertGrants(grants, "update,patch", "groupsnapshot.storage.k8s.io/volumegroupsnapshotcontents/status");
    }

    /** The sidecar's release handles the v1 group snapshot objects that the example class is made with. */
    @Test
    void theSnapshotterHandlesTheV1GroupSnapshotApi() {
        String image = pod.sidecar("csi-snapshotter").get("image").text();
        String tag = image.substring(image.lastIndexOf(":v") + 2);
        List<Integer> version = java.util.Arrays.stream(tag.split("[.-]")).limit(3).map(Integer::valueOf).toList();
        assertTrue(atLeast(version, FIRST_V1_SNAPSHOTTER), image + " predates v1 group snapshots (v8.6.0)");
        assertFalse(atLeast(List.of(8, 5, 9), FIRST_V1_SNAPSHOTTER));
        assertEquals(GROUP_SNAPSHOT_API, DeployTree.only(DeployTree.examples(), "VolumeGroupSnapshotClass")
                .get("apiVersion").text());
    }

    private static boolean atLeast(List<Integer> version, List<Integer> floor) {
        for (int i = 0; i < floor.size(); i++) {
            if (!version.get(i).equals(floor.get(i))) {
                return version.get(i) > floor.get(i);
            }
        }
        return true;
    }

    @Test
    void snapshotterCanUpdateSnapshotContents() {
        Set<String> grants = grants("ClusterRole", "lvmqos-snapshotter");
        assertGrants(grants, "get,list,watch", "snapshot.storage.k8s.io/volumesnapshotclasses");
        assertGrants(grants, "get,list,watch,update,patch", "snapshot.storage.k8s.io/volumesnapshotcontents");
        assertGrants(grants, "update,patch", "snapshot.storage.k8s.io/volumesnapshotcontents/status");
        assertGrants(grants, "create,patch", "events");
    }

    @Test
    void resizerCanRecordNewSizesAndHoldItsLease() {
        Set<String> grants = grants("ClusterRole", "lvmqos-resizer");
        assertGrants(grants, "get,list,watch,patch", "persistentvolumes");
        assertGrants(grants, "get,list,watch", "persistentvolumeclaims");
        assertGrants(grants, "patch", "persistentvolumeclaims/status");
        assertGrants(grants, "get,list,watch", "storage.k8s.io/volumeattributesclasses");
        assertGrants(grants("Role", "lvmqos-resizer"), "get,watch,list,delete,update,create",
                "coordination.k8s.io/leases");
    }

    @Test
    void nothingThisDriverNeverUsesIsGranted() {
        for (YamlNode role : base) {
            if (!role.kind().equals("ClusterRole") && !role.kind().equals("Role")) {
                continue;
            }
            for (String grant : grants(role)) {
                assertFalse(grant.endsWith("/volumeattachments"), role.name() + ": attachRequired is false");
                assertFalse(grant.endsWith(" secrets"), role.name() + ": no class of this driver uses secrets");
                if (grant.contains("groupsnapshot.storage.k8s.io/")) {
                    assertEquals("lvmqos-snapshotter", role.name(), grant + ": only the snapshotter handles groups");
                }
            }
        }
    }

    @Test
    void everyRoleIsBoundToTheNodePodsServiceAccount() {
        String account = pod.spec.get("serviceAccountName").text();
        String namespace = pod.daemonSet.path("metadata.namespace").text();
        DeployTree.named(base, "ServiceAccount", account);
        Set<String> roles = new TreeSet<>();
        for (YamlNode object : base) {
            if (object.kind().equals("ClusterRole") || object.kind().equals("Role")) {
                roles.add(object.kind() + "/" + object.name());
            }
        }
        Set<String> bound = new TreeSet<>();
        for (YamlNode binding : base) {
            if (!binding.kind().equals("ClusterRoleBinding") && !binding.kind().equals("RoleBinding")) {
                continue;
            }
            YamlNode subject = binding.get("subjects").items().getFirst();
            assertEquals("ServiceAccount", subject.get("kind").text(), binding.where());
            assertEquals(account, subject.get("name").text(), binding.where());
            assertEquals(namespace, subject.get("namespace").text(), binding.where());
            if (binding.kind().equals("RoleBinding")) {
                assertEquals(namespace, binding.path("metadata.namespace").text(), binding.where());
            }
            bound.add(binding.path("roleRef.kind").text() + "/" + binding.path("roleRef.name").text());
        }
        assertEquals(roles, bound, "every role is bound, and every binding names a role of the base");
    }
}
