package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The architecture table of docs/architecture.md (section "Modules, packages and layers") says,
 * for every main package, its module, its layer and the packages it uses; this test holds it to
 * the sources, so that the picture there cannot drift from the code.
 */
class ArchitectureReadmeTest {

    private static final List<String> MODULES = List.of("csi-controller", "csi-node");
    private static final String DOCUMENT = "docs/architecture.md";
    private static final String SECTION = "## Modules, packages and layers";
    private static final Pattern ROW = Pattern.compile(
            "\\|\\s*(\\d+)\\s*\\|\\s*`([a-z]+)`\\s*\\|\\s*([a-z-]+)\\s*\\|[^|]*\\|([^|]*)\\|\\s*");
    private static final Pattern NAMED = Pattern.compile("`([a-z]+)`");
    // A use of another package: an import, a static import or a qualified name (also in Javadoc).
    private static final Pattern USE = Pattern.compile("\\bio\\.lvmqos\\.([a-z]+)\\.[A-Z]");
    /**
     * Packages below the services, which get a call's deadline as a value and report failures as
     * driver exceptions: no gRPC type in them (docs/architecture.md, "Deadlines are values").
     */
    private static final List<String> BELOW_THE_SERVICES = List.of("volume", "lvm", "exec");
    private static final Pattern GRPC = Pattern.compile("\\bio\\.grpc\\.");
    /** Pairs of packages allowed to use each other: none. */
    private static final Set<Set<String>> CYCLES = Set.of();

    record Row(int layer, String module, Set<String> uses) {
    }

    @Test
    void everyMainPackageIsInTheTableWithItsModuleAndExactlyTheUsesItHas() {
        Map<String, Row> table = architectureTable();
        Map<String, String> modules = new TreeMap<>();
        Map<String, Set<String>> uses = new TreeMap<>();
        for (String module : MODULES) {
            Path root = DeployTree.root().resolve(module).resolve("src/main/java/io/lvmqos");
            for (Path dir : list(root).stream().filter(Files::isDirectory).toList()) {
                String pkg = dir.getFileName().toString();
                modules.put(pkg, module);
                uses.put(pkg, usesOf(dir, pkg));
            }
        }
        assertEquals(modules.keySet(), table.keySet(), DOCUMENT + "'s architecture table lists every main package");
        List<String> wrong = new ArrayList<>();
        for (String pkg : modules.keySet()) {
            Row row = table.get(pkg);
            if (!row.module().equals(modules.get(pkg))) {
                wrong.add(pkg + " is in " + modules.get(pkg) + ", the table says " + row.module());
            }
            if (!row.uses().equals(uses.get(pkg))) {
                wrong.add(pkg + " uses " + uses.get(pkg) + ", the table says " + row.uses() + "; the row as it is: "
                        + uses.get(pkg).stream().map(p -> "`" + p + "`").collect(Collectors.joining(" ")));
            }
        }
        assertTrue(wrong.isEmpty(), String.join("\n", wrong));
    }

    @Test
    void everyUseGoesToALowerLayerButForTheOneCycle() {
        Map<String, Row> table = architectureTable();
        List<String> upward = new ArrayList<>();
        table.forEach((pkg, row) -> row.uses().forEach(used -> {
            Row target = table.get(used);
            boolean lower = target != null && target.layer() > row.layer();
            boolean cycle = target != null && target.layer() == row.layer() && CYCLES.contains(Set.of(pkg, used));
            if (!lower && !cycle) {
                upward.add(pkg + " (layer " + row.layer() + ") uses " + used + " ("
                        + (target == null ? "not in the table" : "layer " + target.layer()) + ")");
            }
        }));
        assertTrue(upward.isEmpty(), String.join("\n", upward));
        table.forEach((pkg, row) -> {
            if (row.module().equals("csi-controller")) {
                row.uses().forEach(used -> assertEquals("csi-controller", table.get(used).module(),
                        pkg + " of csi-controller uses " + used + " of csi-node"));
            }
        });
    }

    @Test
    void thePackagesBelowTheServicesKnowNoGrpcType() {
        Path root = DeployTree.root().resolve("csi-controller/src/main/java/io/lvmqos");
        List<String> found = new ArrayList<>();
        for (String pkg : BELOW_THE_SERVICES) {
            Path dir = root.resolve(pkg);
            assertTrue(Files.isDirectory(dir), dir + " exists");
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                    Files.readString(file).lines().filter(line -> GRPC.matcher(line).find())
                            .forEach(line -> found.add(root.relativize(file) + ": " + line.strip()));
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        assertTrue(found.isEmpty(), String.join("\n", found));
    }

    @Test
    void theTableReaderFindsEveryRow() {
        // Guards the two tests above against a table they could not read: an empty table would not
        // equal the sources, but a row whose format drifted would simply be missing.
        String section = architectureSection();
        long rows = section.lines().filter(line -> line.startsWith("| ") && line.contains("| csi-")).count();
        assertEquals(rows, architectureTable().size(), "every row of the table has the form | n | `pkg` | module | ... |");
    }

    private static Map<String, Row> architectureTable() {
        Map<String, Row> table = new TreeMap<>();
        for (String line : architectureSection().lines().toList()) {
            Matcher row = ROW.matcher(line);
            if (row.matches()) {
                Set<String> named = new TreeSet<>();
                Matcher name = NAMED.matcher(row.group(4));
                while (name.find()) {
                    named.add(name.group(1));
                }
                table.put(row.group(2), new Row(Integer.parseInt(row.group(1)), row.group(3), named));
            }
        }
        return table;
    }

    private static String architectureSection() {
        try {
            String document = Files.readString(DeployTree.root().resolve(DOCUMENT));
            int start = document.indexOf("\n" + SECTION + "\n");
            assertTrue(start >= 0, DOCUMENT + " has a section " + SECTION);
            int end = document.indexOf("\n## ", start + 1);
            return document.substring(start, end < 0 ? document.length() : end);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Set<String> usesOf(Path packageDir, String pkg) {
        Set<String> used = new TreeSet<>();
        try (Stream<Path> files = Files.walk(packageDir)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                Matcher use = USE.matcher(Files.readString(file));
                while (use.find()) {
                    used.add(use.group(1));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        used.remove(pkg);
        return used;
    }

    private static List<Path> list(Path dir) {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
