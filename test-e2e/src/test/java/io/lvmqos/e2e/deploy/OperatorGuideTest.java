package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.volume.VolumeParameters;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** deploy/README.md says what the manifests and the driver really do. */
class OperatorGuideTest {

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
        documented.removeIf(key -> key.startsWith(VolumeParameters.KUBERNETES_PREFIX));
        assertEquals(new TreeSet<>(VolumeParameters.acceptedKeys()), documented);
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
