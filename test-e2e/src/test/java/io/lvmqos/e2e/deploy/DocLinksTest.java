package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every relative link in README.md, deploy/README.md and docs/*.md leads somewhere: its file or
 * directory exists, and its #anchor is a heading of the target (or of the same file), slugged the way
 * GitHub makes heading anchors. Links in code are not links, and links off the repository are not
 * followed.
 */
class DocLinksTest {

    private static final Pattern INLINE_LINK = Pattern.compile("\\[(?:[^\\[\\]]|\\[[^\\]]*\\])*\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
    private static final Pattern REFERENCE_DEFINITION = Pattern.compile("^\\s{0,3}\\[[^\\]]+\\]:\\s+(\\S+)", Pattern.MULTILINE);
    private static final Pattern HEADING = Pattern.compile("^ {0,3}(#{1,6})\\s+(.*?)\\s*#*\\s*$");
    private static final Pattern HTML_ANCHOR = Pattern.compile("<a\\s+(?:name|id)=\"([^\"]+)\"");

    static List<Path> documents() {
        Path root = DeployTree.root();
        List<Path> documents = new ArrayList<>(List.of(root.resolve("README.md"), root.resolve("deploy/README.md")));
        try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(documents::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return documents;
    }

    @Test
    void everyRelativeLinkAndAnchorResolves() {
        Map<Path, Set<String>> anchors = new HashMap<>();
        List<String> broken = new ArrayList<>();
        int checked = 0;
        for (Path document : documents()) {
            for (String target : links(read(document))) {
                if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
                    continue; // https:, mailto: ...: off the repository
                }
                checked++;
                int hash = target.indexOf('#');
                String file = hash < 0 ? target : target.substring(0, hash);
                Path resolved = file.isEmpty() ? document : document.getParent().resolve(file).normalize();
                String where = DeployTree.root().relativize(document) + ": " + target;
                if (!resolved.startsWith(DeployTree.root()) || !Files.exists(resolved)) {
                    broken.add(where + " (no such file)");
                    continue;
                }
                if (hash >= 0) {
                    String anchor = target.substring(hash + 1);
                    if (!resolved.toString().endsWith(".md")) {
                        broken.add(where + " (an anchor in a file that is not Markdown)");
                    } else if (!anchors.computeIfAbsent(resolved, p -> anchors(read(p))).contains(anchor)) {
                        broken.add(where + " (no heading with that anchor)");
                    }
                }
            }
        }
        assertEquals(List.of(), broken, broken.size() + " broken links of " + checked);
        assertTrue(checked > 50, "only " + checked + " relative links found: the link pattern is wrong");
    }

    /** The slugs GitHub gives the examples of its own documentation, and this test's reading of a page. */
    @Test
    void anchorsAreSluggedAsGitHubSlugsThem() {
        assertEquals(List.of("install", "storageclass-parameters", "calibration-lvmqos-calibrate",
                "2026-12-06-runs-7-and-8-the-guest-on-one-host-cpu-ext4-without-zeros", "publish-latency-publishbenchmark",
                "what-run-tests-runs", "a-b", "a-b-1", "snake_case-stays", "ünïcode-letters-stay", "the-dashboard"),
                new ArrayList<>(anchors(String.join("\n", "# Install", "## StorageClass parameters",
                        "### Calibration: `lvmqos calibrate`",
                        "### 2026-12-06, runs 7 and 8: the guest on one host CPU, ext4 without zeros",
                        "## Publish latency: `PublishBenchmark`", "## What `./run-tests` runs", "## A B", "## a-b",
                        "## snake_case stays", "## Ünïcode letters stay", "```", "# not a heading", "```",
                        "## [The dashboard](observability.md) ##"))));
        assertEquals(List.of("x.md#y", "z.md"), links("see [a](x.md#y) and `[b](code.md)`, [c][r]\n\n[r]: z.md\n"
                + "```\n[d](fenced.md)\n```\n"));
    }

    /** The targets of the page's links, outside code spans and fenced blocks. */
    static List<String> links(String markdown) {
        String prose = withoutCode(markdown);
        List<String> targets = new ArrayList<>();
        Matcher inline = INLINE_LINK.matcher(prose);
        while (inline.find()) {
            targets.add(inline.group(1).replaceAll("^<|>$", ""));
        }
        Matcher reference = REFERENCE_DEFINITION.matcher(prose);
        while (reference.find()) {
            targets.add(reference.group(1));
        }
        return targets;
    }

    /** The anchors of the page's headings, in order: GitHub's slugs, a repeated one numbered from -1. */
    static Set<String> anchors(String markdown) {
        Set<String> anchors = new LinkedHashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        boolean fenced = false;
        for (String line : markdown.split("\n", -1)) {
            if (line.stripLeading().startsWith("```")) {
                fenced = !fenced;
                continue;
            }
            if (fenced) {
                continue;
            }
            Matcher html = HTML_ANCHOR.matcher(line);
            while (html.find()) {
                anchors.add(html.group(1));
            }
            Matcher heading = HEADING.matcher(line);
            if (heading.matches()) {
                String slug = slug(heading.group(2));
                int times = seen.merge(slug, 1, Integer::sum);
                anchors.add(times == 1 ? slug : slug + "-" + (times - 1));
            }
        }
        return anchors;
    }

    /**
     * GitHub's heading slug: the heading's text (a link's text, no Markdown marks) lowercased, everything
     * but letters, digits, marks, spaces, hyphens and underscores dropped, each space a hyphen.
     */
    static String slug(String heading) {
        String text = heading.replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1").replaceAll("<[^>]+>", "");
        return text.toLowerCase(java.util.Locale.ROOT).replaceAll("[^\\p{L}\\p{Nd}\\p{M}\\p{Pc} -]", "").replace(' ', '-');
    }

    /** The text with fenced blocks and code spans blanked out, so a link shown as code is not followed. */
    private static String withoutCode(String markdown) {
        StringBuilder prose = new StringBuilder();
        boolean fenced = false;
        for (String line : markdown.split("\n", -1)) {
            if (line.stripLeading().startsWith("```")) {
                fenced = !fenced;
                prose.append('\n');
                continue;
            }
            prose.append(fenced ? "" : line.replaceAll("`[^`]*`", "``")).append('\n');
        }
        return prose.toString();
    }

    private static String read(Path document) {
        try {
            return Files.readString(document);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
