package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.server.DriverSettings;
import io.lvmqos.server.Main;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The DaemonSet starts the driver with flags its own command line (io.lvmqos.server.Main) defines. */
class PluginCommandLineTest {

    private final NodePod pod = NodePod.fromBase();

    private static Set<String> driverOptionNames() {
        return new TreeSet<>(Main.optionNames());
    }

    /** The plugin's args as kubelet would pass them, with $(VAR) filled from plausible values. */
    private List<String> expandedArgs() throws IOException {
        return DeployedPlugin.withEnvironment(Map.of("NODE_NAME", "node-1.example.org")).args();
    }

    @Test
    void everyFlagGivenToThePluginExistsInItsCommandLine() {
        Set<String> known = driverOptionNames();
        for (String flag : NodePod.flagNames(pod.plugin())) {
            assertTrue(known.contains(flag), "the DaemonSet passes " + flag + " but io.lvmqos.server.Main only has "
                    + known);
        }
    }

    @Test
    void pluginArgumentsParse() {
        DriverSettings settings = assertDoesNotThrow(() -> Main.settings(expandedArgs().toArray(String[]::new)));
        assertEquals("node-1.example.org", settings.nodeId());
    }

    @Test
    void pluginIsGivenEveryPathItDependsOnExplicitly() {
        Set<String> given = Set.copyOf(NodePod.flagNames(pod.plugin()));
        for (String flag : List.of("--endpoint", "--node-id", "--driver-name", "--volume-group", "--kubelet-dir",
                "--cgroup-root")) {
            assertTrue(given.contains(flag), flag + " should be explicit in the DaemonSet, next to the mounts it"
                    + " must agree with");
        }
    }

    @Test
    void pluginNeverLogsTheWire() {
        Set<String> given = Set.copyOf(NodePod.flagNames(pod.plugin()));
        assertFalse(given.contains("--log-wire"), "--log-wire logs every request in hex, secrets included");
        assertTrue(given.contains("--log-level"), "--log-level should be explicit, so an overlay sees what to change");
    }

    @Test
    void pluginRunsTheImagesEntrypointWithTheShippedJvmOptions() {
        assertFalse(pod.plugin().get("command").present(),
                "the image's ENTRYPOINT runs java with deploy/jvm.options and the AOT cache; a command here"
                        + " would bypass both");
    }

    @Test
    void jvmMemoryCapsFitUnderTheContainerLimitWithRoomForChildProcesses() throws IOException {
        Pattern size = Pattern.compile("^-(?:Xmx|XX:MaxMetaspaceSize=|XX:ReservedCodeCacheSize=|XX:MaxDirectMemorySize=)"
                + "([0-9]+[kKmMgG]?)$");
        long capped = 0;
        int caps = 0;
        for (String line : Files.readAllLines(DeployTree.jvmOptions())) {
            Matcher matcher = size.matcher(line.strip());
            if (matcher.matches()) {
                capped += Quantities.jvmBytes(matcher.group(1));
                caps++;
            }
        }
        assertTrue(caps >= 2, "deploy/jvm.options should cap at least the heap and one more JVM area");
        long limit = Quantities.bytes(pod.plugin().path("resources.limits.memory").text());
        long heap = Files.readAllLines(DeployTree.jvmOptions()).stream().map(String::strip)
                .filter(l -> l.startsWith("-Xmx")).map(l -> Quantities.jvmBytes(l.substring(4))).findFirst()
                .orElseThrow(() -> new AssertionError("deploy/jvm.options has no -Xmx"));
        assertTrue(heap * 4 <= limit, "heap " + heap + " is more than a quarter of the container limit " + limit
                + ": the rest is class metadata, code, thread stacks and the lvm/mkfs children");
        assertTrue(capped < limit, "the JVM's capped areas (" + capped + " bytes) exceed the container limit "
                + limit);
    }
}
