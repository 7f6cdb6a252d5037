package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the lvm-config init container's own command with this machine's lvmconfig against a
 * stand-in for a host's /etc/lvm: the host's settings must survive and the container's overrides
 * must win.
 */
class LvmConfigMergeTest {

    private static final String HOST_LVM_CONF = """
            devices {
            	global_filter = [ "r|^/dev/zd.*|", "a|.*|" ]
            	obtain_device_list_from_udev = 1
            }
            activation {
            	udev_sync = 1
            	udev_rules = 1
            }
            backup {
            	retain_days = 60
            }
            """;

    private static final String HOST_LVMLOCAL_CONF = """
            local {
            	system_id = "node-1"
            }
            """;

    @Test
    void mergedConfigurationKeepsTheHostsSettingsUnderTheContainersOverrides(@TempDir Path dir)
            throws IOException, InterruptedException {
        Path lvmconfig = Path.of("/usr/sbin/lvmconfig");
        Assumptions.assumeTrue(Files.isExecutable(lvmconfig),
                "lvmconfig (lvm2) is not installed here: the init container's merge is not exercised");
        Path hostEtcLvm = Files.createDirectories(dir.resolve("host-etc-lvm"));
        Files.writeString(hostEtcLvm.resolve("lvm.conf"), HOST_LVM_CONF);
        Files.writeString(hostEtcLvm.resolve("lvmlocal.conf"), HOST_LVMLOCAL_CONF);
        Path output = Files.createDirectories(dir.resolve("lvm-config")).resolve("lvm.conf");

        YamlNode init = NodePod.fromBase().container("lvm-config");
        List<String> command = new ArrayList<>();
        for (String word : init.get("command").texts()) {
            command.add(word.startsWith("--file=") ? "--file=" + output : word);
        }
        assertEquals(lvmconfig.toString(), command.getFirst());
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(dir.resolve("lvmconfig.log").toFile());
        // the init container reads the host's files at /etc/lvm, lvm's default system directory
        builder.environment().put("LVM_SYSTEM_DIR", hostEtcLvm.toString());
        builder.environment().put("LVM_SUPPRESS_FD_WARNINGS", "1");
        Process process = builder.start();
        assertTrue(process.waitFor(30, TimeUnit.SECONDS), "lvmconfig did not finish");
        assertEquals(0, process.exitValue(), Files.readString(dir.resolve("lvmconfig.log"), StandardCharsets.UTF_8));

        Map<String, String> merged = LvmConfigText.settings(Files.readString(output, StandardCharsets.UTF_8));
        Map<String, String> overrides = LvmConfigText.settings(NodePod.requiredFlag(init, "--config"));
        overrides.forEach((key, value) -> assertEquals(value, merged.get(key), key + " in " + merged));
        assertEquals("node-1", merged.get("local/system_id"), "lvmlocal.conf is part of the merge");
        assertEquals("60", merged.get("backup/retain_days"));
        assertTrue(merged.getOrDefault("devices/global_filter", "").contains("r|^/dev/zd.*|"),
                "the host's filter must apply in the container: " + merged);
    }

    @Test
    void overridesSwitchOffUdevAndShareTheLockDirectory() {
        Map<String, String> overrides = LvmConfigText.settings(
                NodePod.requiredFlag(NodePod.fromBase().container("lvm-config"), "--config"));
        assertEquals("0", overrides.get("activation/udev_sync"));
        assertEquals("0", overrides.get("activation/udev_rules"));
        assertEquals("0", overrides.get("devices/obtain_device_list_from_udev"));
        NodePod pod = NodePod.fromBase();
        String lockDir = overrides.get("global/locking_dir");
        assertEquals(java.util.Optional.of(Path.of(lockDir)), pod.hostPathOf(pod.plugin(), lockDir),
                "the lock directory must be the host's, or host and container lvm do not exclude each other");
    }
}
