package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.MatchResult;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The driver container's memory figures come from one place, the deployed-configuration benchmark
 * in docs/benchmarks.md ("DeployedFootprintBenchmark"), and every file that states them states the
 * same: the kustomize DaemonSet, the chart's values (as rendered with its defaults), README.md and
 * deploy/README.md. The request covers the idle footprint, and the limit leaves at least 25 % over the
 * burst peak the section derives.
 */
class FootprintFiguresAgreeTest {

    /** "asks for 160 MiB and is limited to 320 MiB", bold or not, across a line break or not. */
    private static final Pattern REQUEST_AND_LIMIT = Pattern.compile(
            "asks for (\\d+) MiB(?: of memory)? and is limited to (\\d+) MiB");
    /** "134 MiB resident when idle in the deployed configuration". */
    private static final Pattern IDLE = Pattern.compile("(\\d+) MiB resident when idle in the deployed configuration");
    /** The benchmark section's derived burst peak: "a burst peak of 233 MiB". */
    private static final Pattern BURST_PEAK = Pattern.compile("a burst peak of (\\d+) MiB");
    private static final String SECTION = "## The deployed configuration as the cluster grows";

    private static final List<Path> FILES = List.of(Path.of("README.md"), Path.of("deploy/README.md"),
            Path.of("docs/benchmarks.md"), Path.of("deploy/helm/lvmqos/values.yaml"),
            Path.of("deploy/kubernetes/daemonset.yaml"));

    /** Markup and line breaks out, so that a sentence reads as one line whatever its layout. */
    private static String prose(Path file) throws IOException {
        return Files.readString(DeployTree.root().resolve(file)).replace("**", "").replace("`", "")
                .replaceAll("\\s*\\n\\s*(?:#\\s*)?", " ");
    }

    private static String benchmarkSection() throws IOException {
        String benchmarks = Files.readString(DeployTree.root().resolve("docs/benchmarks.md"));
        int start = benchmarks.indexOf(SECTION);
        assertTrue(start >= 0, "docs/benchmarks.md has no section \"" + SECTION + "\"");
        int end = benchmarks.indexOf("\n## ", start + SECTION.length());
        return benchmarks.substring(start, end < 0 ? benchmarks.length() : end).replace("**", "").replace("`", "")
                .replaceAll("\\s*\\n\\s*", " ");
    }

    private static long mib(String quantity) {
        long bytes = Quantities.bytes(quantity);
        assertEquals(0, bytes % (1L << 20), quantity + " is not a whole number of MiB");
        return bytes >> 20;
    }

    private static List<MatchResult> all(Pattern pattern, String text) {
        return pattern.matcher(text).results().toList();
    }

    private static YamlNode kustomizePlugin() {
        return NodePod.fromBase().plugin();
    }

    private static YamlNode helmPlugin() {
        return new NodePod(DeployTree.only(HelmChart.template(), "DaemonSet")).plugin();
    }

    @Test
    void theChartRendersTheKustomizeBasesResources() {
        assertEquals(kustomizePlugin().get("resources").value(), helmPlugin().get("resources").value());
    }

    @Test
    void everyFileStatesTheManifestsRequestAndLimit() throws IOException {
        YamlNode resources = kustomizePlugin().get("resources");
        long request = mib(resources.path("requests.memory").text());
        long limit = mib(resources.path("limits.memory").text());
        for (Path file : FILES) {
            List<MatchResult> stated = all(REQUEST_AND_LIMIT, prose(file));
            assertFalse(stated.isEmpty(), file + " does not say what the container asks for and is limited to");
            for (MatchResult figure : stated) {
                assertEquals(request + " and " + limit, figure.group(1) + " and " + figure.group(2),
                        file + ": \"" + figure.group() + "\" against the DaemonSet's " + request + "Mi/" + limit + "Mi");
            }
        }
    }

    @Test
    void everyFileStatesTheBenchmarksIdleFigure() throws IOException {
        List<MatchResult> measured = all(IDLE, benchmarkSection());
        assertFalse(measured.isEmpty(), "the benchmark section states no idle figure");
        String idle = measured.getFirst().group(1);
        for (Path file : FILES) {
            List<MatchResult> stated = all(IDLE, prose(file));
            assertFalse(stated.isEmpty(), file + " does not state the deployed configuration's idle footprint");
            for (MatchResult figure : stated) {
                assertEquals(idle, figure.group(1), file + ": \"" + figure.group() + "\"");
            }
        }
    }

    @Test
    void theRequestCoversIdleAndTheLimitLeavesAQuarterOverTheBurstPeak() throws IOException {
        YamlNode resources = kustomizePlugin().get("resources");
        String section = benchmarkSection();
        long idle = Long.parseLong(all(IDLE, section).getFirst().group(1));
        List<MatchResult> peak = all(BURST_PEAK, section);
        assertFalse(peak.isEmpty(), "the benchmark section states no burst peak");
        long burst = Long.parseLong(peak.getFirst().group(1));
        assertTrue(mib(resources.path("requests.memory").text()) >= idle, "the request is below the idle footprint");
        assertTrue(mib(resources.path("limits.memory").text()) * 4 >= burst * 5,
                "the limit leaves less than 25 % over the burst peak of " + burst + " MiB");
    }
}
