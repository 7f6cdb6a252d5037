package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The chart through real Helm: lint, template with every option, the schema's refusals, package. */
class HelmChartTest {

    private static final Path EVERY_OPTION = HelmChart.dir().resolve("ci/every-option-values.yaml");

    @Test
    void helmLintIsClean() {
        LintResult lint = HelmChart.lint();
        assertFalse(lint.isFailed(), String.join("\n", lint.getMessages()));
        List<String> findings = lint.getMessages().stream()
                .filter(m -> m.startsWith("[WARNING]") || m.startsWith("[ERROR]")).toList();
        assertEquals(List.of(), findings);
    }

    @Test
    void everyOptionLandsWhereItBelongs() {
        List<YamlNode> objects = HelmChart.template(EVERY_OPTION);
        YamlNode namespace = DeployTree.only(objects, "Namespace");
        assertEquals(HelmChart.NAMESPACE, namespace.name());
        assertEquals("privileged", namespace.path("metadata.labels").get("pod-security.kubernetes.io/enforce").text());
        assertEquals("lvmqos.example.org", DeployTree.only(objects, "CSIDriver").name());

        NodePod pod = new NodePod(DeployTree.only(objects, "DaemonSet"));
        YamlNode plugin = pod.plugin();
        assertEquals("registry.lab.test/candidates/lvmqos:0.1.0-rc1", plugin.get("image").text());
        assertEquals("Always", plugin.get("imagePullPolicy").text());
        assertEquals("registry.lab.test/candidates/lvmqos:0.1.0-rc1", pod.container("lvm-config").get("image").text());
        assertEquals(List.of(Map.of("name", "registry-pull")), pod.spec.get("imagePullSecrets").value());
        String kubelet = "/var/snap/microk8s/common/var/lib/kubelet";
        assertEquals(List.of("--endpoint=unix:///csi/csi.sock", "--node-id=$(NODE_NAME)",
                "--driver-name=lvmqos.example.org", "--volume-group=fast", "--volume-group=bulk",
                "--kubelet-dir=" + kubelet, "--cgroup-root=/host/sys/fs/cgroup", "--metrics-address=0.0.0.0:9900",
                "--io-cost=fast", "--io-cost-model=fast:ctrl=user model=linear rbps=200000000 rseqiops=380"
                        + " rrandiops=380 wbps=200000000 wseqiops=380 wrandiops=380",
                "--io-cost-qos=fast:ctrl=user rpct=95 rlat=25000 wpct=95 wlat=25000 min=90 max=110",
                "--io-capacity=fast:iops=400,bps=200Mi",
                "--log-level=debug"), plugin.get("args").texts(), "no --watch-kubernetes");
        assertTrue(plugin.get("ports").items().stream().anyMatch(p -> p.get("name").text().equals("metrics")
                && p.get("containerPort").value().equals(9900)), plugin.get("ports").toString());
        assertTrue(plugin.get("env").items().stream().anyMatch(e -> e.get("name").text().equals("JDK_JAVA_OPTIONS")
                && e.get("value").text().equals("-Xmx48m -XX:+ExitOnOutOfMemoryError")), plugin.get("env").toString());
        assertEquals(Map.of("requests", Map.of("cpu", "50m", "memory", "128Mi"), "limits", Map.of("memory", "256Mi")),
                plugin.get("resources").value());
        for (String mount : List.of("kubelet-pods", "kubelet-plugins")) {
            assertTrue(plugin.get("volumeMounts").items().stream().anyMatch(m -> m.get("name").text().equals(mount)
                    && m.get("mountPath").text().startsWith(kubelet + "/")), mount);
        }
        Map<String, String> hostPaths = Map.of("socket-dir", kubelet + "/plugins/lvmqos.example.org/",
                "registration-dir", kubelet + "/plugins_registry/", "kubelet-pods", kubelet + "/pods",
                "kubelet-plugins", kubelet + "/plugins", "host-cgroup", "/sys/fs/cgroup/unified");
        for (YamlNode volume : pod.spec.get("volumes").items()) {
            String name = volume.get("name").text();
            if (hostPaths.containsKey(name)) {
                assertEquals(hostPaths.get(name), volume.path("hostPath.path").text(), name);
            }
        }
        assertEquals(Map.of("lvmqos.example.org/has-vg", "true", "lvmqos.example.org/vgs", "fast-bulk"),
                pod.spec.get("nodeSelector").value());
        assertEquals(List.of("--csi-address=/csi/csi.sock", "--node-deployment",
                "--feature-gates=CSIVolumeGroupSnapshot=true", "--worker-threads=2"),
                pod.container("csi-snapshotter").get("args").texts());
        assertEquals("storage", pod.spec.get("tolerations").items().getFirst().get("key").text());
        assertTrue(pod.spec.path("affinity.nodeAffinity").present());
        assertEquals("storage-critical", pod.spec.get("priorityClassName").text());

        Map<String, String> sidecarArgs = Map.of("node-driver-registrar", "--v=5", "csi-provisioner",
                "--worker-threads=4", "csi-snapshotter", "--worker-threads=2", "csi-resizer", "--workers=2",
                "liveness-probe", "--probe-timeout=5s");
        sidecarArgs.forEach((name, extra) -> {
            YamlNode sidecar = pod.container(name);
            assertTrue(sidecar.get("image").text().startsWith("mirror.example.org/"), name);
            assertEquals(extra, sidecar.get("args").texts().getLast(), name);
        });
        assertTrue(pod.container("node-driver-registrar").get("args").texts()
                .contains("--kubelet-registration-path=" + kubelet + "/plugins/lvmqos.example.org/csi.sock"));

        YamlNode gold = DeployTree.named(objects, "StorageClass", "lvmqos-gold");
        assertEquals("lvmqos.example.org", gold.get("provisioner").text());
        assertEquals(Map.of("volumeGroup", "fast", "readIOPS", "2000", "writeIOPS", "1000",
                "csi.storage.k8s.io/fstype", "xfs"), gold.get("parameters").value());
        assertEquals("Retain", gold.get("reclaimPolicy").text());
        assertFalse(gold.get("allowVolumeExpansion").bool());
        assertEquals("WaitForFirstConsumer", gold.get("volumeBindingMode").text());
        assertEquals(List.of("noatime"), gold.get("mountOptions").texts());
        assertEquals("true", gold.path("metadata.annotations").get("storageclass.kubernetes.io/is-default-class").text());
        YamlNode thin = DeployTree.named(objects, "StorageClass", "lvmqos-thin");
        assertEquals("2.5", thin.get("parameters").get("overprovisionRatio").text());
        assertTrue(thin.get("allowVolumeExpansion").bool());
        YamlNode snapshotClass = DeployTree.named(objects, "VolumeSnapshotClass", "lvmqos-snapshot");
        assertEquals("lvmqos.example.org", snapshotClass.get("driver").text());
        assertEquals("Retain", snapshotClass.get("deletionPolicy").text());
        YamlNode groupClass = DeployTree.named(objects, "VolumeGroupSnapshotClass", "lvmqos-group");
        assertEquals(RbacTest.GROUP_SNAPSHOT_API, groupClass.get("apiVersion").text());
        assertEquals("lvmqos.example.org", groupClass.get("driver").text());
        assertEquals("Retain", groupClass.get("deletionPolicy").text());
        assertEquals("true", groupClass.path("metadata.annotations").get("groupsnapshot.storage.kubernetes.io/is-default-class")
                .text());
        YamlNode attributesClass = DeployTree.named(objects, "VolumeAttributesClass", "lvmqos-fast");
        assertEquals("lvmqos.example.org", attributesClass.get("driverName").text());
        assertEquals(Map.of("writeBPS", "200Mi", "iops", "3k"), attributesClass.get("parameters").value());

        YamlNode serviceMonitor = DeployTree.only(objects, "ServiceMonitor");
        assertEquals("prometheus", serviceMonitor.path("metadata.labels").get("release").text());
        assertEquals("15s", serviceMonitor.path("spec.endpoints").items().getFirst().get("interval").text());
        YamlNode service = DeployTree.only(objects, "Service");
        assertEquals(9900, service.path("spec.ports").items().getFirst().get("port").value());
        assertEquals(pod.daemonSet.path("spec.selector.matchLabels").value(), service.path("spec.selector").value());
        YamlNode podMonitor = DeployTree.only(objects, "PodMonitor");
        assertEquals("20s", podMonitor.path("spec.podMetricsEndpoints").items().getFirst().get("interval").text());
        List<YamlNode> hooks = HelmChart.hooks(EVERY_OPTION);
        assertEquals("lvmqos-qos-check", DeployTree.only(hooks, "StorageClass").name());
        assertEquals(Map.of("writeBPS", "16Mi"), DeployTree.only(hooks, "StorageClass").get("parameters").value());
        assertEquals("544Mi", DeployTree.only(hooks, "PersistentVolumeClaim").path("spec.resources.requests")
                .get("storage").text(), "16 MiB/s for 30 s and 64Mi");
        assertEquals("mirror.example.org/busybox:1.37.0",
                DeployTree.only(hooks, "Pod").path("spec.containers").items().getFirst().get("image").text());
        assertEquals(List.of(Map.of("name", "registry-pull")), DeployTree.only(hooks, "Pod").path("spec.imagePullSecrets")
                .value());
        YamlNode dashboard = DeployTree.only(objects, "ConfigMap");
        assertEquals("lab", dashboard.path("metadata.labels").get("site").text());
        assertEquals("Storage", dashboard.path("metadata.annotations").get("grafana_folder").text());
    }

    /** The repository values.yaml ships is an example: left so, nothing renders, and the message says what to set. */
    @Test
    void theExampleRepositoryIsRefusedWithWhatToSetInstead() {
        Optional<String> refusal = HelmChart.refusal(() -> HelmChart.render(HelmChart.dir(), HelmChart.KUBE_VERSION,
                List.of()));
        assertTrue(refusal.isPresent(), "the chart rendered with its example image repository");
        for (String part : List.of("image.repository is registry.example.com/lvmqos/lvmqos, the chart's example",
                "set it to the repository you pushed the driver's image to", "--set image.repository=REGISTRY/lvmqos",
                "docker.io/library/lvmqos with image.pullPolicy=Never", "Side-loading the image")) {
            assertTrue(refusal.get().contains(part), "the refusal says " + part + ": " + refusal.get());
        }
    }

    @Test
    void anyRepositoryOfTheExampleRegistryIsRefused(@TempDir Path dir) {
        Path values = HelmChart.valuesFile(dir, "example", Map.of("image", Map.of("repository",
                "registry.example.com/lvmqos")));
        assertTrue(HelmChart.refusal(values).orElse("").contains("image.repository is registry.example.com/lvmqos,"));
    }

    /** io.cost governs whole disks: only a group the plugin manages may have it, and nothing is on by default. */
    @Test
    void ioCostIsOffByDefaultAndOnlyForManagedGroups(@TempDir Path dir) {
        List<String> args = new NodePod(DeployTree.only(HelmChart.template(), "DaemonSet")).plugin().get("args").texts();
        assertTrue(args.stream().noneMatch(arg -> arg.startsWith("--io-")), args.toString());
        Path stray = HelmChart.valuesFile(dir, "stray", Map.of("ioCost", Map.of("volumeGroups", List.of("other"))));
        assertTrue(HelmChart.refusal(stray).orElse("").contains("ioCost.volumeGroups lists other, which is not among"
                + " volumeGroups"), HelmChart.refusal(stray).toString());
        Path badCapacity = HelmChart.valuesFile(dir, "capacity", Map.of("ioCost", Map.of("volumeGroups",
                List.of("lvmqos"), "capacity", "400")));
        assertTrue(HelmChart.refusal(badCapacity).orElse("").contains("capacity"), HelmChart.refusal(badCapacity).toString());
    }

    /**
     * The opt-in calibration: one init step per io.cost group, after the LVM configuration is made,
     * with the plugin's image, mounts and privileges, every argument one `lvmqos calibrate` takes,
     * and the two flags that keep a refused measurement from holding the plugin back.
     */
    @Test
    void calibrationIsAnOptInInitStepPerIoCostGroup(@TempDir Path dir) {
        Path off = HelmChart.valuesFile(dir, "off", Map.of("ioCost", Map.of("volumeGroups", List.of("lvmqos"))));
        assertTrue(new NodePod(DeployTree.only(HelmChart.template(off), "DaemonSet")).initContainers().stream()
                .noneMatch(c -> NodePod.name(c).startsWith("calibrate")), "off unless asked for");
        Path on = HelmChart.valuesFile(dir, "on", Map.of("volumeGroups", List.of("lvmqos", "fast"),
                "ioCost", Map.of("volumeGroups", List.of("lvmqos", "fast"), "calibrate",
                        Map.of("enabled", true, "size", "4Gi", "seconds", 5))));
        NodePod pod = new NodePod(DeployTree.only(HelmChart.template(on), "DaemonSet"));
        List<String> order = pod.initContainers().stream().map(NodePod::name).toList();
        assertEquals(List.of("lvm-config", "calibrate-0", "calibrate-1"), order, "the LVM configuration comes first");
        List<String> known = io.lvmqos.server.Main.calibrateOptionNames();
        for (int i = 0; i < 2; i++) {
            YamlNode step = pod.container("calibrate-" + i);
            List<String> args = NodePod.args(step);
            assertEquals("calibrate", args.getFirst());
            assertEquals(Optional.of(i == 0 ? "lvmqos" : "fast"), NodePod.flag(step, "--volume-group"));
            assertEquals(Optional.of("4Gi"), NodePod.flag(step, "--size"));
            assertEquals(Optional.of("5"), NodePod.flag(step, "--seconds"));
            assertTrue(args.containsAll(List.of("--if-uncalibrated", "--never-fail")), args.toString());
            for (String flag : NodePod.flagNames(step)) {
                assertTrue(known.contains(flag), flag + " is not an option of lvmqos calibrate: " + known);
            }
            assertEquals(pod.plugin().get("image").text(), step.get("image").text());
            for (String path : List.of("/dev", "/host/sys/fs/cgroup", "/run/lvm", "/run/lock/lvm", "/etc/lvm/lvm.conf")) {
                assertTrue(NodePod.mountAt(step, path).isPresent(), "calibrate-" + i + " mounts " + path);
            }
        }
        Path badSize = HelmChart.valuesFile(dir, "size", Map.of("ioCost", Map.of("volumeGroups", List.of("lvmqos"),
                "calibrate", Map.of("enabled", true, "size", "2G"))));
        assertTrue(HelmChart.refusal(badSize).orElse("").contains("size"), HelmChart.refusal(badSize).toString());
    }

    @Test
    void theOperatorsRepositoryIsRunWithTheChartsAppVersion() {
        NodePod pod = new NodePod(DeployTree.only(HelmChart.template(), "DaemonSet"));
        String image = HelmChart.OPERATOR_REPOSITORY + ":" + chartYaml().get("appVersion").value();
        assertEquals(image, pod.plugin().get("image").text());
        assertEquals(image, pod.container("lvm-config").get("image").text());
        assertFalse(pod.plugin().get("imagePullPolicy").present(), "Kubernetes' default pull policy");
    }

    /** An image imported into each node's containerd (ctr images import) is run as it is, never pulled. */
    @Test
    void aSideLoadedImageIsNeverPulled(@TempDir Path dir) {
        Path values = HelmChart.valuesFile(dir, "side-loaded", Map.of("image", Map.of(
                "repository", "docker.io/library/lvmqos", "pullPolicy", "Never")));
        NodePod pod = new NodePod(DeployTree.only(HelmChart.template(values), "DaemonSet"));
        for (YamlNode container : List.of(pod.plugin(), pod.container("lvm-config"))) {
            assertEquals("docker.io/library/lvmqos:" + chartYaml().get("appVersion").value(),
                    container.get("image").text());
            assertEquals("Never", container.get("imagePullPolicy").text());
        }
    }

    /** VolumeAttributesClass is storage.k8s.io/v1 from Kubernetes 1.34: the chart says so, and Helm holds it. */
    @Test
    void kubernetesBelow134IsRefusedByTheChartsKubeVersion() {
        assertEquals(">=1.34.0-0", chartYaml().get("kubeVersion").text());
        Optional<String> refusal = HelmChart.refusal(() -> HelmChart.render(HelmChart.dir(), "1.33.7",
                List.of(HelmChart.operatorValues())));
        assertTrue(refusal.orElse("").contains("chart requires kubeVersion: >=1.34.0-0 which is incompatible with"
                + " Kubernetes v1.33.7"), refusal.toString());
        Path vacs = HelmChart.dir().resolve("templates/volumeattributesclasses.yaml");
        assertTrue(readString(vacs).contains("apiVersion: storage.k8s.io/v1\n"), "the API that sets the floor");
    }

    /** Managed clusters report versions such as v1.34.2-eks-4096f2a: the floor's -0 admits them. */
    @Test
    void aProvidersBuildOf134Renders() {
        assertFalse(HelmChart.render(HelmChart.dir(), "1.34.2-eks-4096f2a", List.of(HelmChart.operatorValues())).isEmpty());
    }

    private static YamlNode chartYaml() {
        return DeployTree.parse(HelmChart.dir().resolve("Chart.yaml")).getFirst();
    }

    private static String readString(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void metricsOffRemovesTheFlagThePortAndTheMonitors(@TempDir Path dir) {
        Path values = HelmChart.valuesFile(dir, "off", Map.of("metrics", Map.of("enabled", false,
                "serviceMonitor", Map.of("enabled", true), "podMonitor", Map.of("enabled", true))));
        List<YamlNode> objects = HelmChart.template(values);
        YamlNode plugin = new NodePod(DeployTree.only(objects, "DaemonSet")).plugin();
        assertTrue(plugin.get("args").texts().stream().noneMatch(a -> a.startsWith("--metrics-address")));
        assertTrue(plugin.get("ports").items().stream().noneMatch(p -> p.get("name").text().equals("metrics")));
        assertTrue(DeployTree.ofKind(objects, "ServiceMonitor").isEmpty());
        assertTrue(DeployTree.ofKind(objects, "PodMonitor").isEmpty());
    }

    static Stream<Arguments> badValues() {
        Map<String, Object> gold = Map.of("name", "gold", "parameters", Map.of("readIOPS", "2000"));
        return Stream.of(
                Arguments.of("a negative IOPS", Map.of("storageClasses", List.of(Map.of("name", "gold",
                        "parameters", Map.of("writeIOPS", "-300")))),
                        List.of("'/storageClasses/0/parameters/writeIOPS': '-300'")),
                Arguments.of("an unknown QoS key", Map.of("storageClasses", List.of(Map.of("name", "gold",
                        "parameters", Map.of("writeIOPz", "300")))),
                        List.of("'/storageClasses/0/parameters'", "'writeIOPz' not allowed")),
                Arguments.of("a relative kubelet dir", Map.of("kubeletDir", "var/lib/kubelet"),
                        List.of("'/kubeletDir': 'var/lib/kubelet'")),
                Arguments.of("a StorageClass without a name", Map.of("storageClasses", List.of(gold,
                        Map.of("parameters", Map.of("iops", "300")))),
                        List.of("'/storageClasses/1': missing property 'name'")),
                Arguments.of("a zero limit", Map.of("storageClasses", List.of(Map.of("name", "gold",
                        "parameters", Map.of("bps", "0")))), List.of("'/storageClasses/0/parameters/bps': '0'")),
                Arguments.of("a fractional IOPS", Map.of("volumeAttributesClasses", List.of(Map.of("name", "fast",
                        "parameters", Map.of("iops", "1.5")))),
                        List.of("'/volumeAttributesClasses/0/parameters/iops': '1.5'")),
                Arguments.of("a placement key in a VolumeAttributesClass", Map.of("volumeAttributesClasses",
                        List.of(Map.of("name", "fast", "parameters", Map.of("lvmType", "thin")))),
                        List.of("'/volumeAttributesClasses/0/parameters'", "'lvmType'")),
                Arguments.of("a per-GiB limit mixed with an absolute one", Map.of("storageClasses", List.of(Map.of(
                        "name", "gold", "parameters", Map.of("iopsPerGiB", "10", "readIOPS", "300")))),
                        List.of("'/storageClasses/0/parameters/readIOPS'")),
                Arguments.of("a thin pool on a linear volume", Map.of("storageClasses", List.of(Map.of("name", "gold",
                        "parameters", Map.of("thinPool", "pool0")))),
                        List.of("'/storageClasses/0/parameters': missing property 'lvmType'")),
                Arguments.of("an unknown log level", Map.of("logLevel", "verbose"), List.of("'/logLevel': value must be one of")));
    }

    @ParameterizedTest(name = "{0} is refused")
    @MethodSource("badValues")
    void aBadValueIsRefusedWithAMessageNamingIt(String what, Map<String, Object> values, List<String> named,
                                                @TempDir Path dir) {
        Optional<String> refusal = HelmChart.refusal(HelmChart.valuesFile(dir, "bad", values));
        assertTrue(refusal.isPresent(), what + " was accepted");
        System.out.println(what + ": " + refusal.get());
        for (String name : named) {
            assertTrue(refusal.get().contains(name), "the message names " + name + ": " + refusal.get());
        }
    }

    /** deploy/README.md's values table names every top-level value of values.yaml, and nothing else. */
    @Test
    void theGuidesValuesTableCoversValuesYaml() throws IOException {
        String guide = Files.readString(DeployTree.readme());
        int start = guide.indexOf("\n## Install with Helm");
        assertTrue(start >= 0, "deploy/README.md has a section Install with Helm");
        String section = guide.substring(start, guide.indexOf("\n## ", start + 1));
        Set<String> documented = new TreeSet<>();
        for (String line : section.split("\n")) {
            if (line.startsWith("| `")) {
                Matcher name = Pattern.compile("`([a-zA-Z]+)[.`<]")
                        .matcher(line.split("\\|")[1]);
                while (name.find()) {
                    documented.add(name.group(1));
                }
            }
        }
        Set<String> values = new TreeSet<>(DeployTree.parse(HelmChart.dir().resolve("values.yaml"))
                .getFirst().map().keySet().stream().map(String::valueOf).toList());
        values.remove("namespace"); // explained in the text above the table
        assertEquals(values, documented);
    }

    @Test
    void helmPackageMakesTheChartArchive() throws IOException {
        Path destination = Files.createDirectories(Path.of("target/helm"));
        Path archive = destination.resolve("lvmqos-" + chartYaml().get("version").value() + ".tgz");
        Files.deleteIfExists(archive);
        new Helm(HelmChart.dir()).packageIt().withDestination(destination).call();
        assertTrue(Files.size(archive) > 1000, archive + " written");
        // the archive is a chart Helm renders as it renders the directory
        String fromArchive = HelmChart.render(archive, HelmChart.KUBE_VERSION, List.of(HelmChart.operatorValues()));
        assertEquals(HelmChart.templateText(), fromArchive);
    }
}
