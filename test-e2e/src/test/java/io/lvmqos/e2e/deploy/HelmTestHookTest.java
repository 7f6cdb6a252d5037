package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.volume.VolumeParameters;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chart's `helm test` hook (templates/tests/write-limit.yaml), as far as it goes without a cluster:
 * rendered by Helm, its objects checked, and its pod's script run here with dd and the clock stubbed,
 * so that the 10% rule is seen to pass and to fail.
 */
class HelmTestHookTest {

    private static final String NAME = HelmChart.RELEASE + "-test-write";
    private static final String CLEANUP = "before-hook-creation,hook-succeeded";

    private static String annotation(YamlNode object, String key) {
        return object.path("metadata.annotations").get(key).optionalText().orElse("");
    }

    private static Map<String, String> env(YamlNode container) {
        Map<String, String> env = new LinkedHashMap<>();
        container.get("env").items().forEach(e -> env.put(e.get("name").text(), e.get("value").text()));
        return env;
    }

    private static YamlNode container(List<YamlNode> hooks) {
        return DeployTree.only(hooks, "Pod").path("spec.containers").items().getFirst();
    }

    /** The install itself has none of the test's objects: Helm makes them at `helm test`. */
    @Test
    void theTestsObjectsAreHooksOnly() throws IOException {
        assertEquals(List.of(), HelmChart.template().stream().filter(o -> o.name().startsWith(NAME)).toList());
        String template = Files.readString(HelmChart.dir().resolve("templates/tests/write-limit.yaml"));
        assertEquals(3, template.split("helm.sh/hook: test\n", -1).length - 1, "one per object");
    }

    @Test
    void theTestIsAStorageClassAClaimAndAPodMadeInThatOrderAndRemovedWhenItPasses() {
        List<YamlNode> hooks = HelmChart.hooks();
        assertEquals(List.of("StorageClass", "PersistentVolumeClaim", "Pod"), hooks.stream().map(YamlNode::kind).toList());
        List<Integer> weights = new ArrayList<>();
        for (YamlNode hook : hooks) {
            assertEquals("test", annotation(hook, "helm.sh/hook"), hook.kind());
            assertEquals(CLEANUP, annotation(hook, "helm.sh/hook-delete-policy"), hook.kind());
            weights.add(Integer.parseInt(annotation(hook, "helm.sh/hook-weight").isEmpty() ? "0"
                    : annotation(hook, "helm.sh/hook-weight")));
        }
        assertEquals(weights.stream().sorted().toList(), weights, "the class before the claim before the pod");
        assertEquals(3, weights.stream().distinct().count(), weights.toString());
    }

    @Test
    void thePodsClaimIsOfALimitedClassOfThisDriver() {
        List<YamlNode> hooks = HelmChart.hooks();
        YamlNode storageClass = DeployTree.only(hooks, "StorageClass");
        YamlNode claim = DeployTree.only(hooks, "PersistentVolumeClaim");
        YamlNode pod = DeployTree.only(hooks, "Pod");
        assertEquals(NAME, storageClass.name());
        assertEquals(DeployTree.DRIVER_NAME, storageClass.get("provisioner").text());
        assertEquals(Map.of("writeBPS", "8Mi"), storageClass.get("parameters").value());
        assertDoesNotThrow(() -> VolumeParameters.parse(ExamplesTest.parameters(storageClass)));
        assertEquals("WaitForFirstConsumer", storageClass.get("volumeBindingMode").text());
        assertEquals(NAME, claim.path("spec.storageClassName").text());
        assertEquals(HelmChart.NAMESPACE, claim.path("metadata.namespace").text());
        // 8 MiB/s for 20 s, and 64 MiB for ext4's own
        assertEquals("224Mi", claim.path("spec.resources.requests").get("storage").text());
        assertEquals(NAME, pod.path("spec.volumes").items().getFirst().path("persistentVolumeClaim.claimName").text());
        assertEquals("/data", container(hooks).get("volumeMounts").items().getFirst().get("mountPath").text());
        assertEquals("Never", pod.path("spec.restartPolicy").text());
        assertEquals("docker.io/library/busybox:1.37.0", container(hooks).get("image").text());
    }

    @Test
    void thePodWritesWithDdAndDirectIoAndFailsAboveTheLimitByMoreThanTenPercent() {
        YamlNode container = container(HelmChart.hooks());
        assertEquals(List.of("/bin/sh", "-c"), container.get("command").texts().subList(0, 2));
        String script = container.get("command").texts().get(2);
        assertTrue(script.contains("dd if=/dev/zero of=/data/f bs=1M count=\"$MEBIBYTES\" oflag=direct"), script);
        assertTrue(script.contains("if (rate > limit * 1.1) {"), script);
        assertEquals(Map.of("LIMIT_BPS", "8388608", "MEBIBYTES", "160"), env(container));
    }

    private record Run(int exitCode, String output, String ddArguments) {
    }

    /** The pod's script with dd, rm and the clock (cut of /proc/uptime) stubbed: the write takes {@code seconds}. */
    private static Run runScript(YamlNode container, String seconds, Path dir) throws IOException, InterruptedException {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Path ddArguments = dir.resolve("dd-arguments");
        Path clock = dir.resolve("clock");
        Files.writeString(clock, "1000.00\n" + new java.math.BigDecimal("1000.00").add(new java.math.BigDecimal(seconds))
                + "\n");
        Path reads = dir.resolve("reads");
        Map<String, String> stubs = Map.of(
                "dd", "echo \"$*\" > '" + ddArguments + "'\n",
                "rm", "exit 0\n",
                "cut", "n=$(($(cat '" + reads + "' 2>/dev/null || echo 0) + 1)); echo $n > '" + reads + "'; sed -n \"${n}p\" '"
                        + clock + "'\n");
        for (Map.Entry<String, String> stub : stubs.entrySet()) {
            Path file = bin.resolve(stub.getKey());
            Files.writeString(file, "#!/bin/sh\n" + stub.getValue(), StandardCharsets.UTF_8);
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        ProcessBuilder builder = new ProcessBuilder("/bin/sh", "-c", container.get("command").texts().get(2))
                .redirectErrorStream(true);
        builder.environment().putAll(env(container));
        builder.environment().put("PATH", bin + ":/usr/bin:/bin");
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(30, TimeUnit.SECONDS), "the script ended");
        Files.deleteIfExists(reads);
        return new Run(process.exitValue(), output, Files.exists(ddArguments) ? Files.readString(ddArguments).strip() : "");
    }

    @Test
    void theScriptPassesAtTheLimitAndFailsWellAboveIt(@TempDir Path dir) throws Exception {
        YamlNode container = container(HelmChart.hooks());
        // 160 MiB at 8 MiB/s take 20 s
        Run atTheLimit = runScript(container, "20.00", dir);
        assertEquals(0, atTheLimit.exitCode(), atTheLimit.output());
        assertEquals("if=/dev/zero of=/data/f bs=1M count=160 oflag=direct", atTheLimit.ddArguments());
        assertTrue(atTheLimit.output().contains("wrote 160 MiB with direct I/O in 20.00 s: 8.00 MiB/s; the StorageClass"
                + " limits writes to 8.00 MiB/s"), atTheLimit.output());
        Run slower = runScript(container, "41.30", dir);
        assertEquals(0, slower.exitCode(), slower.output());
        Run withinTenPercent = runScript(container, "18.35", dir);
        assertEquals(0, withinTenPercent.exitCode(), withinTenPercent.output());
        Run elevenPercentAbove = runScript(container, "18.00", dir);
        assertEquals(1, elevenPercentAbove.exitCode(), elevenPercentAbove.output());
        assertTrue(elevenPercentAbove.output().contains("FAIL: more than 10% above the limit"), elevenPercentAbove.output());
        Run unlimited = runScript(container, "0.40", dir);
        assertEquals(1, unlimited.exitCode(), unlimited.output());
    }

    @Test
    void itsValuesSetTheClassTheRateTheDurationAndTheImage(@TempDir Path dir) {
        Path values = HelmChart.valuesFile(dir, "test", Map.of("test", Map.of("storageClass", "qos-check",
                "writeBPS", "512Ki", "seconds", 10, "image", "registry.lab.test/tools/busybox:1.37.0")));
        List<YamlNode> hooks = HelmChart.hooks(values);
        YamlNode storageClass = DeployTree.only(hooks, "StorageClass");
        assertEquals("qos-check", storageClass.name());
        assertEquals(Map.of("writeBPS", "512Ki"), storageClass.get("parameters").value());
        YamlNode claim = DeployTree.only(hooks, "PersistentVolumeClaim");
        assertEquals("qos-check", claim.path("spec.storageClassName").text());
        assertEquals("69Mi", claim.path("spec.resources.requests").get("storage").text());
        assertEquals(Map.of("LIMIT_BPS", "524288", "MEBIBYTES", "5"), env(container(hooks)));
        assertEquals("registry.lab.test/tools/busybox:1.37.0", container(hooks).get("image").text());
    }

    @Test
    void disabledThereIsNoTest(@TempDir Path dir) {
        Path values = HelmChart.valuesFile(dir, "off", Map.of("test", Map.of("enabled", false)));
        assertEquals(List.of(), HelmChart.hooks(values));
    }

    @Test
    void aRateTheTemplateCannotReadIsRefused(@TempDir Path dir) {
        for (Object rate : List.of("8MB", "8M", "1.5Mi", "0Mi", "100", 100)) {
            Path values = HelmChart.valuesFile(dir, "rate", Map.of("test", Map.of("writeBPS", rate)));
            String refusal = HelmChart.refusal(values).orElse("");
            assertTrue(refusal.contains("'/test/writeBPS'"), rate + ": " + refusal);
        }
        Path values = HelmChart.valuesFile(dir, "seconds", Map.of("test", Map.of("seconds", 2)));
        assertFalse(HelmChart.refusal(values).isEmpty(), "2 s measure too little");
    }
}
