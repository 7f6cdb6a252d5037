package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The import graph inside a package, file by file, and what each package-info says its package
 * depends on. ArchitectureReadmeTest holds the arrows between packages to docs/architecture.md;
 * this test holds the arrows inside the packages that had grown back arrows (two files that use
 * each other, or a longer loop) to none, the package-info files to their imports, and every
 * program start to the one runner in {@code exec}.
 */
class PackageGraphTest {

    private static final List<String> MODULES = List.of("csi-controller", "csi-node");
    /** Packages whose files form no cycle: each file uses only files that do not use it back. */
    private static final List<String> ACYCLIC = List.of("mount", "volume", "cgroup");
    private static final Pattern USE = Pattern.compile("\\bio\\.lvmqos\\.([a-z]+)\\.[A-Z]");
    private static final Pattern CODE_NAME = Pattern.compile("\\{@code ([a-z]+)}");
    // comments and string literals say nothing of what a file uses
    private static final Pattern NOT_CODE = Pattern.compile(
            "/\\*.*?\\*/|//[^\\n]*|\"\"\"(?s:.*?)\"\"\"|\"(?:\\\\.|[^\"\\\\\\n])*\"|'(?:\\\\.|[^'\\\\\\n])*'",
            Pattern.DOTALL);
    private static final Pattern WORD = Pattern.compile("\\b[A-Z][A-Za-z0-9]*\\b");
    /**
     * A sealed type must name its subtypes, and they name it back: the language's way to close a
     * set, read as one unit, so its permits clause is no use of them.
     */
    private static final Pattern PROCESS_START =
            Pattern.compile("\\bProcessBuilder\\b|\\bRuntime\\.getRuntime\\(\\)\\.exec\\b");
    private static final Pattern PERMITS = Pattern.compile("\\bpermits\\s[^{]*\\{");

    @Test
    void noFileOfTheseOnePackagesUsesAFileThatUsesItBack() {
        List<String> cycles = new ArrayList<>();
        for (String pkg : ACYCLIC) {
            Map<String, Set<String>> graph = fileGraph(packageDir(pkg));
            assertTrue(graph.size() > 3, pkg + " has its files read: " + graph.keySet());
            for (Set<String> cycle : cycles(graph)) {
                cycles.add(pkg + ": " + cycle + " use each other; "
                        + cycle.stream().map(f -> f + " -> " + intersect(graph.get(f), cycle)).toList());
            }
        }
        assertTrue(cycles.isEmpty(), String.join("\n", cycles));
    }

    @Test
    void theCycleFinderFindsALoopOfThree() {
        // guards the test above against a finder that finds nothing
        Map<String, Set<String>> graph = new TreeMap<>(Map.of(
                "A", Set.of("B"), "B", Set.of("C"), "C", Set.of("A", "D"), "D", Set.of(), "E", Set.of("D")));
        assertEquals(List.of(Set.of("A", "B", "C")), cycles(graph));
        assertTrue(cycles(new TreeMap<>(Map.of("A", Set.of("B"), "B", Set.of()))).isEmpty());
    }

    @Test
    void everyPackageInfoNamesExactlyThePackagesItsPackageUses() {
        List<String> wrong = new ArrayList<>();
        for (String module : MODULES) {
            for (Path dir : list(root(module)).stream().filter(Files::isDirectory).toList()) {
                String pkg = dir.getFileName().toString();
                Optional<Set<String>> stated = stated(dir.resolve("package-info.java"));
                Set<String> used = usesOf(dir, pkg);
                if (stated.isEmpty()) {
                    wrong.add(pkg + "/package-info.java has no sentence \"Depends on ...\"; its files use " + used);
                } else if (!stated.get().equals(used)) {
                    wrong.add(pkg + "/package-info.java says it depends on " + stated.get() + "; its files use " + used);
                }
            }
        }
        assertTrue(wrong.isEmpty(), String.join("\n", wrong));
    }

    @Test
    void everyProgramIsStartedThroughTheOneRunnerInExec() {
        List<String> starts = new ArrayList<>();
        for (String module : MODULES) {
            for (Path dir : list(root(module)).stream().filter(Files::isDirectory).toList()) {
                if (dir.getFileName().toString().equals("exec")) {
                    continue;
                }
                for (Path file : list(dir)) {
                    String code = NOT_CODE.matcher(read(file)).replaceAll(" ");
                    if (PROCESS_START.matcher(code).find()) {
                        starts.add(root(module).relativize(file).toString());
                    }
                }
            }
        }
        assertTrue(starts.isEmpty(), "programs started outside exec/CommandRunner: " + starts);
    }

    /**
     * The packages named in {@code {@code x}} form in the package-info's "Depends on" sentence, up
     * to its first full stop, colon or semicolon ("Depends on nothing of the driver" names none).
     */
    private static Optional<Set<String>> stated(Path packageInfo) {
        String text = read(packageInfo).replaceAll("\\s*\\n\\s*\\*\\s*", " ");
        int start = text.indexOf("Depends ");
        if (start < 0) {
            return Optional.empty();
        }
        Matcher end = Pattern.compile("[.:;](\\s|$)").matcher(text);
        String sentence = text.substring(start, end.find(start) ? end.start() : text.length());
        Set<String> named = new TreeSet<>();
        Matcher name = CODE_NAME.matcher(sentence);
        while (name.find()) {
            named.add(name.group(1));
        }
        return Optional.of(named);
    }

    /** Each file of the package (by class name) and the package's other files it names in its code. */
    static Map<String, Set<String>> fileGraph(Path packageDir) {
        Map<String, String> code = new TreeMap<>();
        for (Path file : list(packageDir)) {
            String name = file.getFileName().toString();
            if (name.endsWith(".java") && !name.equals("package-info.java")) {
                code.put(name.substring(0, name.length() - ".java".length()),
                        PERMITS.matcher(NOT_CODE.matcher(read(file)).replaceAll(" ")).replaceAll("{"));
            }
        }
        Map<String, Set<String>> graph = new TreeMap<>();
        code.forEach((file, text) -> {
            Set<String> uses = new TreeSet<>();
            Matcher word = WORD.matcher(text);
            while (word.find()) {
                if (code.containsKey(word.group()) && !word.group().equals(file)) {
                    uses.add(word.group());
                }
            }
            graph.put(file, uses);
        });
        return graph;
    }

    /** The strongly connected components of more than one file (Tarjan's algorithm). */
    static List<Set<String>> cycles(Map<String, Set<String>> graph) {
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        Deque<String> stack = new ArrayDeque<>();
        List<Set<String>> found = new ArrayList<>();
        for (String node : graph.keySet()) {
            if (!index.containsKey(node)) {
                connect(node, graph, index, low, stack, found);
            }
        }
        return found;
    }

    private static void connect(String node, Map<String, Set<String>> graph, Map<String, Integer> index,
                                Map<String, Integer> low, Deque<String> stack, List<Set<String>> found) {
        index.put(node, index.size());
        low.put(node, index.get(node));
        stack.push(node);
        for (String next : graph.getOrDefault(node, Set.of())) {
            if (!index.containsKey(next)) {
                connect(next, graph, index, low, stack, found);
                low.put(node, Math.min(low.get(node), low.get(next)));
            } else if (stack.contains(next)) {
                low.put(node, Math.min(low.get(node), index.get(next)));
            }
        }
        if (low.get(node).equals(index.get(node))) {
            Set<String> component = new TreeSet<>();
            String member;
            do {
                member = stack.pop();
                component.add(member);
            } while (!member.equals(node));
            if (component.size() > 1) {
                found.add(component);
            }
        }
    }

    private static Set<String> intersect(Set<String> a, Set<String> b) {
        Set<String> both = new TreeSet<>(a);
        both.retainAll(b);
        return both;
    }

    private static Set<String> usesOf(Path packageDir, String pkg) {
        Set<String> used = new TreeSet<>();
        for (Path file : list(packageDir)) {
            if (file.toString().endsWith(".java")) {
                Matcher use = USE.matcher(read(file));
                while (use.find()) {
                    used.add(use.group(1));
                }
            }
        }
        used.remove(pkg);
        return used;
    }

    private static Path packageDir(String pkg) {
        return MODULES.stream().map(module -> root(module).resolve(pkg)).filter(Files::isDirectory).findFirst()
                .orElseThrow(() -> new AssertionError("no main package " + pkg + " in " + MODULES));
    }

    private static Path root(String module) {
        return DeployTree.root().resolve(module).resolve("src/main/java/io/lvmqos");
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<Path> list(Path dir) {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
