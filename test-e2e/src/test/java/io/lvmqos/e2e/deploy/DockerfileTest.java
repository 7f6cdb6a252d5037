package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.e2e.deploy.DockerfileText.Instruction;
import io.lvmqos.e2e.deploy.DockerfileText.Stage;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/** deploy/Dockerfile read structurally: no Docker engine here, so its shape is what is checked. */
class DockerfileTest {

    private final DockerfileText dockerfile;

    DockerfileTest() throws IOException {
        dockerfile = DockerfileText.read(DeployTree.dockerfile());
    }

    private Stage runtime() {
        return dockerfile.last();
    }

    /** The packages that apt-get installs in a stage. */
    static List<String> installedPackages(Stage stage) {
        Matcher matcher = Pattern.compile("apt-get install ([^&;|]*)").matcher(stage.runText());
        List<String> packages = new java.util.ArrayList<>();
        while (matcher.find()) {
            for (String word : matcher.group(1).trim().split("\\s+")) {
                if (!word.startsWith("-")) {
                    packages.add(word);
                }
            }
        }
        return packages;
    }

    @Test
    void buildsInSeparateStagesAndShipsTheLast() {
        assertTrue(dockerfile.stages.size() >= 3, "build, jlink and runtime stages");
        assertEquals(Optional.of("runtime"), runtime().name());
    }

    @Test
    void runtimeIsDebianBookwormSlim() {
        assertEquals("debian:bookworm-slim", runtime().image());
    }

    @Test
    void buildStageRunsTheMavenPackageBuild() {
        Stage build = dockerfile.stage("build");
        assertTrue(build.image().startsWith("maven:"), build.image());
        assertTrue(build.runText().contains("mvn -B package -DskipTests"), build.runText());
    }

    @Test
    void everyFileCopiedFromTheBuildContextExists() {
        for (Stage stage : dockerfile.stages) {
            for (Instruction copy : stage.all("COPY")) {
                if (copy.option("--from").isPresent() || copy.heredoc() != null) {
                    continue;
                }
                List<String> words = copy.words();
                for (String source : words.subList(0, words.size() - 1)) {
                    assertTrue(Files.exists(DeployTree.root().resolve(source)),
                            "COPY " + source + ": not in the repository (the build context is its root)");
                }
            }
        }
    }

    @Test
    void jreStageLinksTheModulesTheJarNeedsWithABaseCdsArchive() {
        Stage jre = dockerfile.stage("jre");
        String run = jre.runText();
        assertTrue(run.contains("jdeps --print-module-deps --ignore-missing-deps"), run);
        assertTrue(run.contains("jlink"), run);
        assertTrue(run.contains("--generate-cds-archive"),
                "the JDK's base archive is what the JVM falls back on should it find the AOT cache unusable");
    }

    @Test
    void runtimeInstallsTheStorageTools() {
        List<String> packages = installedPackages(runtime());
        assertTrue(packages.containsAll(List.of("lvm2", "e2fsprogs", "xfsprogs", "util-linux")), packages.toString());
        assertTrue(packages.contains("thin-provisioning-tools"),
                "thin pools cannot be activated without thin_check, and it is only a Recommends of lvm2");
        assertTrue(runtime().runText().contains("--no-install-recommends"));
        assertTrue(runtime().runText().contains("rm -rf /var/lib/apt/lists"));
    }

    @Test
    void runtimeHasNoBuildTools() {
        Pattern forbidden = Pattern.compile("maven|openjdk.*|default-jdk.*|temurin.*|gcc.*|g\\+\\+|make|build-essential|.*-dev");
        for (String pkg : installedPackages(runtime())) {
            assertFalse(forbidden.matcher(pkg.toLowerCase(Locale.ROOT)).matches(), "runtime installs " + pkg);
        }
        String image = runtime().image().toLowerCase(Locale.ROOT);
        assertFalse(image.contains("maven") || image.contains("jdk"), image);
        for (Instruction copy : runtime().all("COPY")) {
            Optional<String> from = copy.option("--from");
            if (from.isEmpty()) {
                continue;
            }
            List<String> words = copy.words();
            String source = words.getFirst();
            if (from.get().equals("jre")) {
                assertEquals("/opt/java", source, "only the linked runtime comes from the jlink stage");
            } else {
                assertEquals("build", from.get(), copy.arguments());
                assertTrue(source.endsWith("/lvmqos.jar"), "only the jar comes from the build stage: " + source);
            }
        }
    }

    @Test
    void entrypointRunsJavaUnderAnInitThatReapsOrphans() {
        List<String> argv = entrypointArgv(runtime().all("ENTRYPOINT").getLast());
        assertEquals(List.of("/usr/bin/tini", "--"), argv.subList(0, 2),
                "java as PID 1 never reaps orphaned children: the entrypoint must start with tini");
        assertTrue(installedPackages(runtime()).contains("tini"), "the runtime must install tini");
    }

    @Test
    void entrypointRunsTheJarWithTheShippedJvmOptionsAndAotCache() {
        Instruction entrypoint = runtime().all("ENTRYPOINT").getLast();
        List<String> argv = javaArgv(entrypointArgv(entrypoint));
        assertEquals("/opt/java/bin/java", argv.getFirst());
        assertTrue(argv.contains("@/opt/lvmqos/jvm.options"), argv.toString());
        assertTrue(argv.stream().anyMatch(a -> a.startsWith("-XX:AOTCache=")), argv.toString());
        assertEquals(List.of("-jar", "/opt/lvmqos/lvmqos.jar"), argv.subList(argv.size() - 2, argv.size()));
        assertTrue(runtime().all("COPY").stream().anyMatch(c -> c.words().equals(
                List.of("deploy/jvm.options", "/opt/lvmqos/jvm.options"))), "jvm.options is copied where it is read");
    }

    @Test
    void aotTrainingRunUsesTheEntrypointsJvmFlags() {
        List<String> argv = javaArgv(entrypointArgv(runtime().all("ENTRYPOINT").getLast()));
        String run = runtime().runText();
        for (String flag : argv.subList(1, argv.size() - 2)) {
            // the training run writes the cache the entrypoint reads
            String expected = flag.replace("-XX:AOTCache=", "-XX:AOTCacheOutput=");
            assertTrue(run.contains(expected), "the cache is only used when the flags match; training run lacks " + expected);
        }
        assertTrue(run.contains("TrainingClient"), "the training run must make the calls a starting plugin gets");
    }

    @Test
    void imageLvmConfigurationMatchesTheInitContainersOverrides() {
        Instruction lvmConf = runtime().all("COPY").stream().filter(c -> c.heredoc() != null
                && c.words().getLast().equals("/etc/lvm/lvm.conf")).findFirst()
                .orElseThrow(() -> new AssertionError("the image has no /etc/lvm/lvm.conf of its own"));
        String overrides = NodePod.requiredFlag(NodePod.fromBase().container("lvm-config"), "--config");
        assertEquals(LvmConfigText.settings(overrides), LvmConfigText.settings(lvmConf.heredoc()),
                "the image's standalone settings and the DaemonSet's overrides must be the same");
    }

    /** The java command line of the entrypoint, after the init that starts it. */
    private static List<String> javaArgv(List<String> entrypoint) {
        int java = entrypoint.indexOf("/opt/java/bin/java");
        assertTrue(java >= 0, "the entrypoint runs no /opt/java/bin/java: " + entrypoint);
        return entrypoint.subList(java, entrypoint.size());
    }

    static List<String> entrypointArgv(Instruction entrypoint) {
        Object parsed = new Yaml(new SafeConstructor(new LoaderOptions())).load(entrypoint.arguments());
        if (!(parsed instanceof List<?> list)) {
            throw new AssertionError("ENTRYPOINT must be in exec form (a JSON array), so that SIGTERM reaches java: "
                    + entrypoint.arguments());
        }
        return list.stream().map(String::valueOf).toList();
    }
}
