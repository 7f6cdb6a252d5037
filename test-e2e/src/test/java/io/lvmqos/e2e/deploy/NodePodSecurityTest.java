package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Mount propagation, privilege and host paths of the node pod: what kubelet will actually do. */
class NodePodSecurityTest {

    private final NodePod pod = NodePod.fromBase();

    /** The two directories of kubelet's where the plugin mounts: publish targets, and staging and block targets. */
    private static final List<String> KUBELET_MOUNTS = List.of("/var/lib/kubelet/pods", "/var/lib/kubelet/plugins");

    @Test
    void onlyThePluginsKubeletDirectoriesAreBidirectional() {
        List<String> bidirectional = new ArrayList<>();
        for (YamlNode container : pod.allContainers()) {
            for (YamlNode mount : NodePod.mounts(container)) {
                if (NodePod.propagation(mount).equals("Bidirectional")) {
                    bidirectional.add(NodePod.name(container) + ":" + mount.get("mountPath").text());
                }
            }
        }
        assertEquals(KUBELET_MOUNTS.stream().map(path -> NodePod.PLUGIN + ":" + path).toList(), bidirectional,
                "the plugin's bind mounts into pods must reach the host through kubelet's pods/ and plugins/, and"
                        + " nothing else may propagate mounts back to the host");
    }

    @Test
    void pluginKubeletDirectoriesAreTheHostsAtTheSamePaths() {
        String kubeletDir = NodePod.requiredFlag(pod.plugin(), "--kubelet-dir");
        for (String path : KUBELET_MOUNTS) {
            YamlNode mount = NodePod.mountAt(pod.plugin(), path).orElseThrow();
            assertEquals(Optional.of(Path.of(path)), pod.hostPathOf(mount),
                    "kubelet passes host paths in NodeStage/NodePublish; the plugin must see them at the same place");
            assertEquals(Path.of(kubeletDir), Path.of(path).getParent(), "--kubelet-dir is their parent");
        }
    }

    @Test
    void kubeletsOwnFilesAreNotMountedIntoAnyContainer() {
        for (YamlNode container : pod.allContainers()) {
            assertTrue(NodePod.mountAt(container, "/var/lib/kubelet").isEmpty(), NodePod.name(container)
                    + " mounts all of kubelet's directory (pki/, plugins_registry/, state files): mount only what it needs");
        }
    }

    @Test
    void everyMountPropagationIsAValidMode() {
        for (YamlNode container : pod.allContainers()) {
            for (YamlNode mount : NodePod.mounts(container)) {
                assertTrue(List.of("None", "HostToContainer", "Bidirectional").contains(NodePod.propagation(mount)),
                        mount.where());
            }
        }
    }

    @Test
    void onlyThePluginIsPrivileged() {
        List<String> privileged = pod.allContainers().stream()
                .filter(c -> c.path("securityContext.privileged").present() && c.path("securityContext.privileged").bool())
                .map(NodePod::name).toList();
        assertEquals(List.of(NodePod.PLUGIN), privileged);
    }

    @Test
    void unprivilegedContainersCannotEscalateAndDropAllCapabilities() {
        for (YamlNode container : pod.allContainers()) {
            if (NodePod.name(container).equals(NodePod.PLUGIN)) {
                continue;
            }
            YamlNode security = container.get("securityContext");
            assertFalse(security.get("allowPrivilegeEscalation").bool(), container.where());
            assertEquals(List.of("ALL"), security.path("capabilities.drop").texts(), container.where());
            assertTrue(security.path("capabilities.add").items().isEmpty(), container.where());
        }
    }

    @Test
    void podDoesNotShareTheHostsNamespaces() {
        for (String field : List.of("hostNetwork", "hostPID", "hostIPC")) {
            YamlNode value = pod.spec.get(field);
            assertTrue(!value.present() || !value.bool(),
                    field + ": lvm must not see the host's udev through shared IPC, and nothing here needs the host's"
                            + " network or processes");
        }
    }

    @ParameterizedTest(name = "{0} from the host at {1}")
    @CsvSource({
            "/dev, /dev",
            "/run/lvm, /run/lvm",
            "/run/lock/lvm, /run/lock/lvm",
            "/etc/lvm, /etc/lvm",
            "/var/lib/kubelet/pods, /var/lib/kubelet/pods",
            "/var/lib/kubelet/plugins, /var/lib/kubelet/plugins",
    })
    void pluginMountsWhatLvmAndKubeletNeedFromTheHost(String hostPath, String containerPath) {
        YamlNode mount = NodePod.mountAt(pod.plugin(), containerPath)
                .orElseThrow(() -> new AssertionError("plugin does not mount " + containerPath));
        assertEquals(Optional.of(Path.of(hostPath)), pod.hostPathOf(mount));
    }

    @Test
    void hostCgroupTreeIsMountedWhereCgroupRootPoints() {
        String cgroupRoot = NodePod.requiredFlag(pod.plugin(), "--cgroup-root");
        YamlNode mount = NodePod.mountAt(pod.plugin(), cgroupRoot)
                .orElseThrow(() -> new AssertionError("nothing is mounted at --cgroup-root " + cgroupRoot));
        assertEquals(Optional.of(Path.of("/sys/fs/cgroup")), pod.hostPathOf(mount));
        assertFalse(cgroupRoot.equals("/sys/fs/cgroup"),
                "a container's own /sys/fs/cgroup is its cgroup namespace, not the host's tree");
    }

    @Test
    void hostUdevStateIsNotMounted() {
        for (YamlNode container : pod.allContainers()) {
            for (YamlNode mount : NodePod.mounts(container)) {
                Optional<Path> host = pod.hostPathOf(mount);
                assertFalse(host.isPresent() && (host.get().startsWith("/run/udev") || host.get().equals(Path.of("/run"))),
                        mount.where() + ": with the host's udev state visible, lvm would wait for udev confirmations"
                                + " that cannot reach the container");
            }
        }
    }

    @Test
    void containerLvmConfigurationIsTheMergedFileOverTheHostsLvmConf() {
        YamlNode mount = NodePod.mountAt(pod.plugin(), "/etc/lvm/lvm.conf").orElseThrow();
        assertEquals("lvm.conf", mount.get("subPath").text());
        YamlNode init = pod.container("lvm-config");
        YamlNode written = NodePod.mountAt(init, "/lvm-config").orElseThrow();
        assertEquals(mount.get("name").text(), written.get("name").text(),
                "the init container must write the file the plugin mounts");
        assertTrue(NodePod.requiredFlag(init, "--file").equals("/lvm-config/lvm.conf"));
        assertTrue(NodePod.mountAt(init, "/etc/lvm").orElseThrow().get("readOnly").bool(),
                "the init container only reads the host's configuration");
    }

    @Test
    void downwardApiGivesTheNodeNameAsNodeId() {
        assertEquals("$(NODE_NAME)", NodePod.requiredFlag(pod.plugin(), "--node-id"));
        assertEquals(Optional.of("spec.nodeName"), NodePod.envFieldPath(pod.plugin(), "NODE_NAME"));
    }

    @Test
    void everyEnvironmentReferenceInArgumentsIsDefined() {
        for (YamlNode container : pod.allContainers()) {
            for (String reference : NodePod.envReferences(container)) {
                assertTrue(NodePod.envNames(container).contains(reference), NodePod.name(container)
                        + " uses $(" + reference + ") but does not define it: Kubernetes would pass it literally");
            }
        }
    }

    @Test
    void everyContainerHasMemoryRequestAndLimit() {
        for (YamlNode container : pod.allContainers()) {
            Map<?, ?> requests = container.path("resources.requests").map();
            Map<?, ?> limits = container.path("resources.limits").map();
            assertTrue(requests.containsKey("memory") && requests.containsKey("cpu"), container.where());
            assertTrue(limits.containsKey("memory"), container.where());
            assertTrue(Quantities.bytes(String.valueOf(requests.get("memory")))
                    <= Quantities.bytes(String.valueOf(limits.get("memory"))), container.where());
        }
    }

    @Test
    void nodePluginIsNotEvictedBeforeThePodsThatUseIt() {
        assertEquals("system-node-critical", pod.spec.get("priorityClassName").text());
    }
}
