package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.e2e.guest.GuestContainerd;
import io.lvmqos.errors.DriverException;
import io.lvmqos.mount.MountOptions;
import io.lvmqos.volume.VolumeParameters;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** deploy/README.md says what the manifests and the driver really do. */
class OperatorGuideTest {

    /** A field of the StorageClass, not a parameter: the node mounts with it (CSI mount_flags). */
    static final String MOUNT_OPTIONS = "mountOptions";
    /** The driver's image repository the guide and values.yaml give as an example. */
    static final String EXAMPLE_REPOSITORY = "registry.example.com/lvmqos/lvmqos";

    private final String guide;

    OperatorGuideTest() throws IOException {
        guide = Files.readString(DeployTree.readme());
    }

    /** The rows of the Markdown table that follows the heading. */
    private List<String> tableRows(String heading) {
        int start = guide.indexOf("\n## " + heading);
        assertTrue(start >= 0, "no section " + heading);
        int end = guide.indexOf("\n## ", start + 1);
        List<String> rows = new ArrayList<>();
        for (String line : guide.substring(start, end < 0 ? guide.length() : end).split("\n")) {
            if (line.startsWith("| `")) {
                rows.add(line);
            }
        }
        return rows;
    }

    /** The backticked names in a row's first cell ("| `readIOPS`, `writeIOPS` | ..."). */
    private static List<String> firstCellNames(String row) {
        String cell = row.split("\\|")[1];
        List<String> names = new ArrayList<>();
        Matcher matcher = Pattern.compile("`([^`]+)`").matcher(cell);
        while (matcher.find()) {
            names.add(matcher.group(1));
        }
        assertFalse(names.isEmpty(), row);
        return names;
    }

    @Test
    void parameterTableListsExactlyTheParametersTheDriverAccepts() {
        Set<String> documented = new TreeSet<>();
        for (String row : tableRows("StorageClass parameters")) {
            documented.addAll(firstCellNames(row));
        }
        assertTrue(documented.containsAll(List.of("csi.storage.k8s.io/fstype", MOUNT_OPTIONS)), documented.toString());
        documented.removeIf(key -> key.startsWith(VolumeParameters.KUBERNETES_PREFIX) || key.equals(MOUNT_OPTIONS));
        assertEquals(new TreeSet<>(VolumeParameters.acceptedKeys()), documented);
    }

    /** Each key's row says what it is, its value and unit, its range, its default and whether a class may change it. */
    @Test
    void everyParameterRowFillsEveryColumn() {
        List<String> rows = tableRows("StorageClass parameters");
        assertTrue(rows.size() >= 16, rows.size() + " rows");
        for (String row : rows) {
            String[] cells = row.substring(1, row.length() - 1).split("\\|", -1);
            assertEquals(6, cells.length, row);
            for (String cell : cells) {
                assertFalse(cell.isBlank(), "an empty cell in " + row);
            }
        }
    }

    /** The mountOptions row's examples are what the node's parser does with them. */
    @Test
    void theMountOptionsRowSaysWhatTheNodeDoesWithEachOption() {
        String row = tableRows("StorageClass parameters").stream().filter(r -> r.contains("`" + MOUNT_OPTIONS + "`"))
                .findFirst().orElseThrow();
        for (String refused : List.of("bind", "remount", "move", "loop", "mand", "a,b", "a b")) {
            assertThrows(DriverException.class, () -> MountOptions.parse(List.of(refused)), refused);
        }
        for (String dropped : List.of("defaults", "nofail", "x-systemd.automount")) {
            assertEquals(MountOptions.NONE, MountOptions.parse(List.of(dropped)), dropped);
        }
        for (String flag : List.of("ro", "noatime", "nodev", "lazytime")) {
            assertEquals(1, MountOptions.parse(List.of(flag)).flags().size(), flag);
            assertTrue(row.contains("`" + flag + "`"), flag);
        }
        assertEquals(List.of("discard"), MountOptions.parse(List.of("discard")).data(), "the rest goes to the filesystem");
        assertTrue(row.contains("`bind`") && row.contains("`loop`") && row.contains("`nofail`"), row);
    }

    @Test
    void parameterExamplesInTheGuidePassTheValidator() {
        Matcher block = Pattern.compile("```yaml\n(.*?)```", Pattern.DOTALL).matcher(guide);
        int checked = 0;
        while (block.find()) {
            for (YamlNode document : DeployTree.parse(block.group(1), "deploy/README.md")) {
                if (document.get("parameters").present()) {
                    Map<String, String> parameters = ExamplesTest.parameters(document);
                    assertDoesNotThrow(() -> VolumeParameters.parse(parameters), parameters.toString());
                    checked++;
                }
            }
        }
        assertTrue(checked >= 4, "the guide shows the four example classes' parameters");
    }

    @Test
    void sidecarTableNamesTheImagesTheDaemonSetRuns() {
        Set<String> documented = new TreeSet<>();
        Matcher image = Pattern.compile("`(registry\\.k8s\\.io/[^`]+)`").matcher(guide);
        while (image.find()) {
            documented.add(image.group(1));
        }
        Set<String> deployed = new TreeSet<>();
        for (YamlNode container : NodePod.fromBase().containers()) {
            if (!NodePod.name(container).equals(NodePod.PLUGIN)) {
                deployed.add(container.get("image").text());
            }
        }
        // and the sidecar that deploy/snapshot-metadata adds to the node pod
        DeployTree.parse(DeployTree.root().resolve("deploy/snapshot-metadata/daemonset-sidecar.yaml")).getFirst()
                .path("spec.template.spec").get("containers").items()
                .forEach(container -> deployed.add(container.get("image").text()));
        assertEquals(deployed, documented);
    }

    @Test
    void guideTellsHowToInstallAndWhatTheSnapshotControllerNeeds() {
        assertTrue(guide.contains("kubectl apply -k deploy/kubernetes"));
        assertTrue(guide.contains("--enable-distributed-snapshotting"));
        assertTrue(guide.contains("io.max"));
    }

    /** The text of a section, from its heading ("## Install with Helm", "### Side-loading the image") to the next of its level or above. */
    private String section(String heading) {
        int start = guide.indexOf("\n" + heading + "\n");
        assertTrue(start >= 0, "no section " + heading);
        String level = heading.substring(0, heading.indexOf(' '));
        Matcher next = Pattern.compile("\n#{2," + level.length() + "} ").matcher(guide);
        return guide.substring(start, next.find(start + 1) ? next.start() : guide.length());
    }

    /** The Helm values file the guide shows installs the class the example claim uses, once its repository is real. */
    @Test
    void theHelmValuesExampleMakesTheClassTheExampleClaimUses(@TempDir Path dir) throws IOException {
        Matcher block = Pattern.compile("```yaml\n(# lvmqos-values.yaml\n.*?)```", Pattern.DOTALL)
                .matcher(section("## Install with Helm"));
        assertTrue(block.find(), "the guide shows lvmqos-values.yaml");
        YamlNode values = DeployTree.parse(block.group(1), "deploy/README.md").getFirst();
        assertEquals(EXAMPLE_REPOSITORY, values.path("image.repository").text());
        Path file = dir.resolve("lvmqos-values.yaml");
        Files.writeString(file, block.group(1).replace(EXAMPLE_REPOSITORY, HelmChart.OPERATOR_REPOSITORY));
        YamlNode claim = DeployTree.only(DeployTree.parse(DeployTree.examplesDir().resolve("pvc-and-pod.yaml")),
                "PersistentVolumeClaim");
        String className = claim.path("spec.storageClassName").text();
        YamlNode made = DeployTree.named(HelmChart.template(file), "StorageClass", className);
        YamlNode example = DeployTree.named(DeployTree.examples(), "StorageClass", className);
        assertEquals(ExamplesTest.parameters(example), ExamplesTest.parameters(made));
        Path asShown = Files.writeString(dir.resolve("as-shown.yaml"), block.group(1));
        assertTrue(HelmChart.refusal(() -> HelmChart.render(HelmChart.dir(), HelmChart.KUBE_VERSION, List.of(asShown)))
                .isPresent(), "copied unchanged, the example repository is refused");
    }

    /**
     * One example repository, the chart's default, wherever the driver's image is named, and the base's
     * stand-in, which no tool accepts (MixedClusterDefaultsTest).
     */
    @Test
    void theGuideTheChartAndTheBaseNameOneExampleRepository() {
        assertEquals(EXAMPLE_REPOSITORY, DeployTree.parse(HelmChart.dir().resolve("values.yaml")).getFirst()
                .path("image.repository").text());
        assertEquals(MixedClusterDefaultsTest.KUSTOMIZE_STAND_IN,
                DeployTree.kustomization().get("images").items().getFirst().get("newName").text());
        Matcher registry = Pattern.compile("registry\\.example\\.[a-z]+[^\\s`:]*").matcher(guide);
        Set<String> named = new TreeSet<>();
        while (registry.find()) {
            named.add(registry.group());
        }
        assertEquals(Set.of(EXAMPLE_REPOSITORY, "registry.example.com", MixedClusterDefaultsTest.KUSTOMIZE_STAND_IN), named);
    }

    @Test
    void sideLoadingNamesTheImageTheTestNodeImportsAndNeverPullsIt() {
        String section = section("### Side-loading the image");
        String version = VersionsAgreeTest.projectVersion();
        for (String part : List.of("target/image/lvmqos.oci.tar", "scripts/build-image",
                "ctr -n k8s.io images import --base-name docker.io/library/lvmqos ",
                "docker.io/library/lvmqos:" + version, "--set image.repository=docker.io/library/lvmqos",
                "--set image.pullPolicy=Never", "every node")) {
            assertTrue(section.contains(part), "the side-loading section says " + part);
        }
        assertEquals(GuestContainerd.DRIVER_IMAGE, "docker.io/library/lvmqos:" + version,
                "the name ctr gives the archive with that base name, as the test node imports it");
    }

    @Test
    void theGuideSaysWhatSetsTheChartsFloor() {
        String section = section("## Install with Helm");
        String floor = DeployTree.parse(HelmChart.dir().resolve("Chart.yaml")).getFirst().get("kubeVersion").text();
        assertTrue(section.contains("`kubeVersion: \"" + floor + "\"`"), floor);
        assertTrue(section.contains("VolumeAttributesClass") && section.contains("`storage.k8s.io/v1` from 1.34"));
        assertTrue(section.contains("the chart creates no StorageClass unless you list some"));
    }

    @Test
    void theHelmTestSectionHasTheChartsDefaultsAndSaysItWasNotRunHere() {
        String section = section("### Checking an install with helm test");
        YamlNode test = DeployTree.parse(HelmChart.dir().resolve("values.yaml")).getFirst().get("test");
        assertTrue(section.contains("`test.writeBPS` (" + test.get("writeBPS").text() + ")"), section);
        assertTrue(section.contains("`test.seconds` (" + test.get("seconds").value() + ")"), section);
        assertTrue(section.contains("oflag=direct") && section.contains("more than 10% above the"));
        assertTrue(section.contains("It has not been run against a cluster here"));
    }

    @Test
    void driverFlagsNamedInTheGuideExist() {
        Set<String> driverFlags = new TreeSet<>(io.lvmqos.server.Main.optionNames());
        for (String flag : List.of("--volume-group", "--kubelet-dir", "--log-level", "--log-wire",
                "--probe-lvm-timeout")) {
            assertTrue(guide.contains("`" + flag + "`"), flag + " should be explained in the guide");
            assertTrue(driverFlags.contains(flag), flag);
        }
    }
}
