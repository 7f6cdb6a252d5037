package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The README's top says what its two commands need, and says it as the scripts do: the packages they
 * install are scripts/lib.sh's list, and the JDK they want is the one the build compiles for.
 */
class ReadmeTest {

    private static final int MOST_LINES = 400;

    private static String read(String path) throws IOException {
        return Files.readString(DeployTree.root().resolve(path));
    }

    @Test
    void theReadmeStaysShort() throws IOException {
        long lines = read("README.md").lines().count();
        assertTrue(lines <= MOST_LINES, "README.md has " + lines + " lines: move detail to docs/");
    }

    /** The first section after the introduction names both commands, root, Debian 12, amd64 and the network. */
    @Test
    void theTopSaysBothCommandsAndWhatTheyNeed() throws IOException {
        String readme = read("README.md");
        int first = readme.indexOf("\n## ");
        String top = readme.substring(first, readme.indexOf("\n## ", first + 1));
        for (String needed : List.of("`./demo`", "`./run-tests`", "Debian 12 amd64", "as root", "Maven Central",
                "Debian archive", "system-wide", "min")) {
            assertTrue(top.contains(needed), "the README's first section does not say " + needed);
        }
    }

    @Test
    void thePackagesTheTopListsAreTheOnesTheScriptsInstall() throws IOException {
        Matcher required = Pattern.compile("(?m)^REQUIRED_PACKAGES=\"([^\"]+)\"").matcher(read("scripts/lib.sh"));
        assertTrue(required.find(), "scripts/lib.sh has no REQUIRED_PACKAGES");
        Set<String> installed = new TreeSet<>(List.of(required.group(1).trim().split("\\s+")));
        Matcher listed = Pattern.compile("missing from this list: `([^`]+)`").matcher(read("README.md"));
        assertTrue(listed.find(), "the README lists no packages");
        assertEquals(installed, new TreeSet<>(List.of(listed.group(1).trim().split("\\s+"))));
    }

    /** pom.xml's release is the JDK the README names, the one lib.sh picks by default and the one ./demo says. */
    @Test
    void oneJdkVersionEverywhere() throws IOException {
        Matcher release = Pattern.compile("<maven.compiler.release>(\\d+)</maven.compiler.release>").matcher(read("pom.xml"));
        assertTrue(release.find());
        String version = release.group(1);
        assertTrue(read("scripts/lib.sh").contains("want=${1:-" + version + "}"), "lib.sh's default JDK");
        Matcher demo = Pattern.compile("choosing a JDK \\((\\d+) or newer\\)").matcher(read("demo"));
        assertTrue(demo.find(), "./demo names the JDK it picks");
        assertEquals(version, demo.group(1));
        Matcher named = Pattern.compile("JDK (\\d+)").matcher(read("README.md"));
        int found = 0;
        while (named.find()) {
            assertEquals(version, named.group(1), "README.md: " + named.group());
            found++;
        }
        assertTrue(found > 0);
    }
}
