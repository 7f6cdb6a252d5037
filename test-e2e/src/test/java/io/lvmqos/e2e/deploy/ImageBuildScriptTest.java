package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.e2e.deploy.DockerfileText.Stage;
import java.io.IOException;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * scripts/build-image makes the image that deploy/Dockerfile describes, from the same parts: the two are
 * read side by side, so neither can change what the image holds or runs without the other.
 */
class ImageBuildScriptTest {

    private final String script;
    private final Stage runtime;

    ImageBuildScriptTest() throws IOException {
        script = Files.readString(DeployTree.root().resolve("scripts/build-image"));
        runtime = DockerfileText.read(DeployTree.dockerfile()).last();
    }

    /** The value of a top-level {@code name="..."} or {@code name=word} assignment in the script. */
    private String assignment(String name) {
        Matcher matcher = Pattern.compile("(?m)^" + name + "=\"?([^\"\\n]*)\"?$").matcher(script);
        assertTrue(matcher.find(), "scripts/build-image assigns no " + name);
        return matcher.group(1);
    }

    @Test
    void installsEveryPackageTheDockerfileInstalls() {
        List<String> scripted = Arrays.asList(assignment("driver_packages").split(" "));
        List<String> dockerfile = DockerfileTest.installedPackages(runtime);
        assertTrue(scripted.containsAll(dockerfile), "script " + scripted + ", Dockerfile " + dockerfile);
    }

    @Test
    void runsTheDockerfilesEntrypoint() {
        List<String> dockerfile = DockerfileTest.entrypointArgv(runtime.all("ENTRYPOINT").getLast());
        assertEquals(dockerfile, List.of(assignment("entrypoint").split(" ")));
    }

    @Test
    void trainsTheAotCacheWithTheDockerfilesClient() throws IOException {
        String client = "scripts/image/TrainingClient.java";
        assertTrue(Files.exists(DeployTree.root().resolve(client)), client);
        assertTrue(script.contains(client) && script.contains("TrainingClient \"$root/tmp/aot-training.sock\""),
                "the script's training run must make the starting plugin's calls, as the Dockerfile's does");
        assertTrue(script.contains("-XX:AOTCacheOutput="), "the training run writes the cache the entrypoint reads");
        assertTrue(DockerfileText.read(DeployTree.dockerfile()).stage("jre").all("COPY").stream()
                .anyMatch(copy -> copy.words().getFirst().equals(client)), "the Dockerfile compiles the same client");
    }

    @Test
    void setsTheDockerfilesEnvironment() {
        String env = String.join(" ", runtime.all("ENV").stream().map(DockerfileText.Instruction::arguments).toList());
        assertTrue(env.contains("JAVA_HOME=" + assignment("java_home")), env);
        assertTrue(env.contains("PATH=" + assignment("path")), env);
        assertTrue(env.contains("MALLOC_ARENA_MAX=" + assignment("malloc_arena_max")), env);
        assertTrue(script.contains("--config.env MALLOC_ARENA_MAX=$malloc_arena_max"),
                "the image's config carries the Dockerfile's MALLOC_ARENA_MAX");
        assertTrue(script.contains("MALLOC_ARENA_MAX=$malloc_arena_max \\\n"),
                "the training run has the entrypoint's environment");
    }

    @Test
    void takesItsLvmConfigurationFromTheDockerfile() {
        assertTrue(script.contains("/^COPY <<'EOF' \\/etc\\/lvm\\/lvm.conf\\$/,/^EOF\\$/p"),
                "the image's /etc/lvm/lvm.conf is the Dockerfile's heredoc, which DockerfileTest compares with the DaemonSet");
        assertTrue(runtime.all("COPY").stream().anyMatch(copy -> copy.heredoc() != null
                && copy.arguments().startsWith("<<'EOF'") && copy.words().getLast().equals("/etc/lvm/lvm.conf")),
                "the heredoc the script extracts");
    }

    @Test
    void namesTheImageTheDaemonSetRuns() throws IOException, InterruptedException {
        String image = "lvmqos:" + VersionsAgreeTest.buildImageTag();
        NodePod pod = NodePod.fromBase();
        assertEquals(image, pod.container("lvmqos").get("image").text());
        assertEquals(image, pod.container("lvm-config").get("image").text());
    }
}
