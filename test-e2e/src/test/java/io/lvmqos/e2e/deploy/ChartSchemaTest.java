package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.errors.DriverException;
import io.lvmqos.volume.QosKeys;
import io.lvmqos.volume.QosParameters;
import io.lvmqos.volume.VolumeParameters;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * The chart's schema against the driver's own parameter parser (VolumeParameters, QosParameters):
 * the schema knows exactly the parser's keys, and every value Helm's schema validation accepts,
 * the parser accepts too, so that an install never creates a StorageClass or a
 * VolumeAttributesClass whose volumes the driver would refuse. (The schema may be stricter: it
 * refuses "007" and "1.5k" IOPS, which the parser takes; that costs an operator nothing.)
 */
class ChartSchemaTest {

    /** Quantities as operators write them, and near misses of every kind. */
    private static final List<String> QUANTITIES = List.of("1", "300", "2k", "50Mi", "1G", "1Ki", "1Ti", "999M",
            "52428800", "4294967294", "4294967295", "999999999999999999", "9223372036854775807",
            "9223372036854775808", "999999Ti", "9Ei", "1Pi", "0", "00", "-1", "-300", "+5", "1.5", "1.5k", "0.5",
            "0.000001", "0.0", "1e3", "1E3", "10m", "abc", "", " 3", "3 ", "0x10", "007", "1.0", "Mi", "5 Mi", "1,000",
            "max", "MAX", "Max", "unlimited", " max", "max ", "maximum", "none", "None", "800", "10000", "10001",
            // fractions of a quantity: whole bytes or not (1.1Ki is 1126.4)
            "1.5Gi", "0.5Gi", "1.25Mi", "0.125Ki", "1.375Gi", "999999.875Ti", "1.1Ki", "0.3Gi", "2.5M", "1.001k",
            "1.0005k", "0.001k", "0.000k", "0.5Ki", "1.5Ti", ".5Gi", "1.Gi");
    private static final List<String> NAMES = List.of("lvmqos", "vg-1", "thinpool", "pool_0", "A.b+c", "-vg", "+vg",
            ".", "..", ".hidden", "snapshot1", "pvmove0", "a b", "vg/1", "x".repeat(63), "x".repeat(64), "");
    private static final List<String> RATIOS = List.of("1", "1.5", "4", "2.5", "0.5", "0", "0.99", "1e3", "abc", "",
            "-2", "100000", "1.000001");

    @SuppressWarnings("unchecked")
    private static Map<String, Object> definition(String name) {
        Map<String, Object> schema = (Map<String, Object>) new Yaml().load(readSchema());
        return (Map<String, Object>) ((Map<String, Object>) schema.get("definitions")).get(name);
    }

    private static String readSchema() {
        try {
            return Files.readString(HelmChart.dir().resolve("values.schema.json"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> properties(String definition) {
        return (Map<String, Object>) definition(definition).get("properties");
    }

    @Test
    void theSchemaKnowsExactlyTheParsersKeys() {
        assertEquals(new TreeSet<>(QosKeys.KEYS), new TreeSet<>(properties("qosParameters").keySet()));
        assertEquals(new TreeSet<>(VolumeParameters.acceptedKeys()),
                new TreeSet<>(properties("storageClassParameters").keySet()));
        for (String key : QosKeys.KEYS) {
            assertEquals(properties("qosParameters").get(key), properties("storageClassParameters").get(key),
                    key + " has one format in StorageClasses and VolumeAttributesClasses");
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> prefixed = (Map<String, Object>) definition("storageClassParameters").get("patternProperties");
        assertEquals(Set.of("^" + VolumeParameters.KUBERNETES_PREFIX.replace(".", "\\.")), prefixed.keySet());
    }

    @Test
    void everyQosValueTheSchemaAcceptsTheParserAccepts(@TempDir Path dir) {
        Map<String, List<String>> acceptedByBoth = new LinkedHashMap<>();
        List<String> wrong = new ArrayList<>();
        for (String key : QosKeys.KEYS) {
            for (String value : QUANTITIES) {
                Map<String, String> parameters = Map.of(key, value);
                boolean chart = storageClassAccepted(dir, parameters);
                boolean driver = accepts(VolumeParameters::parse, parameters);
                boolean chartVac = attributesClassAccepted(dir, parameters);
                boolean driverVac = accepts(QosParameters::parseMutable, parameters);
                if (chart && !driver || chartVac && !driverVac) {
                    wrong.add(key + "=\"" + value + "\"");
                }
                if (chart && driver) {
                    acceptedByBoth.computeIfAbsent(key, k -> new ArrayList<>()).add(value);
                }
            }
        }
        System.out.println("accepted by the schema and the parser: " + acceptedByBoth);
        assertEquals(List.of(), wrong, "the chart accepts what the driver refuses");
        for (String key : QosKeys.KEYS) {
            assertTrue(acceptedByBoth.getOrDefault(key, List.of()).size() >= 4, key + ": " + acceptedByBoth.get(key));
        }
        assertTrue(acceptedByBoth.get("writeBPS").containsAll(List.of("50Mi", "1G", "52428800", "1.5Gi", "2.5M")),
                "the quantities the guide shows: " + acceptedByBoth.get("writeBPS"));
        assertTrue(acceptedByBoth.get("bpsFloor").contains("1.5Gi"));
        assertTrue(acceptedByBoth.get("readIOPS").containsAll(List.of("300", "2k")));
        assertTrue(acceptedByBoth.get("iopsPerGiB").containsAll(List.of("0.5", "1.5", "300")));
        for (String key : QosKeys.CAP_KEYS) {
            assertTrue(acceptedByBoth.get(key).contains("max"), key + " takes max (no limit) in the chart too");
        }
        for (String key : QosKeys.GUARANTEE_KEYS) {
            assertTrue(acceptedByBoth.get(key).contains("none"), key + " takes none (no guarantee) in the chart too");
        }
        assertTrue(acceptedByBoth.get("ioWeight").containsAll(List.of("1", "800", "10000")));
        assertFalse(acceptedByBoth.get("ioWeight").contains("10001"));
    }

    @Test
    void everyPlacementValueTheSchemaAcceptsTheParserAccepts(@TempDir Path dir) {
        List<Map<String, String>> candidates = new ArrayList<>();
        for (String name : NAMES) {
            candidates.add(Map.of("volumeGroup", name));
            candidates.add(Map.of("lvmType", "thin", "thinPool", name));
        }
        for (String ratio : RATIOS) {
            candidates.add(Map.of("lvmType", "thin", "overprovisionRatio", ratio));
            candidates.add(Map.of("lvmType", "linear", "overprovisionRatio", ratio));
        }
        for (String type : List.of("linear", "thin", "Thin", "")) {
            candidates.add(Map.of("lvmType", type));
        }
        candidates.add(Map.of("thinPool", "thinpool"));
        candidates.add(Map.of("lvmType", "linear", "thinPool", "thinpool"));
        candidates.add(Map.of("iopsPerGiB", "10", "iops", "300"));
        candidates.add(Map.of("bpsPerGiB", "1Mi", "writeBPS", "50Mi"));
        candidates.add(Map.of("iopsPerGiB", "10", "bps", "50Mi"));
        candidates.add(Map.of("csi.storage.k8s.io/fstype", "xfs"));
        candidates.add(Map.of("fsType", "xfs"));
        int acceptedByBoth = 0;
        List<String> wrong = new ArrayList<>();
        for (Map<String, String> parameters : candidates) {
            boolean chart = storageClassAccepted(dir, parameters);
            boolean driver = accepts(VolumeParameters::parse, parameters);
            if (chart && !driver) {
                wrong.add(parameters.toString());
            }
            acceptedByBoth += chart && driver ? 1 : 0;
        }
        assertEquals(List.of(), wrong, "the chart accepts what the driver refuses");
        assertTrue(acceptedByBoth >= 15, acceptedByBoth + " of " + candidates.size() + " accepted by both");
    }

    @Test
    void theExamplesStorageClassesPassTheSchema(@TempDir Path dir) {
        for (YamlNode storageClass : DeployTree.ofKind(DeployTree.examples(), "StorageClass")) {
            Map<String, String> parameters = new LinkedHashMap<>();
            storageClass.get("parameters").map().forEach((k, v) -> parameters.put((String) k, String.valueOf(v)));
            assertTrue(storageClassAccepted(dir, parameters), storageClass.name() + " " + parameters);
        }
    }

    private static boolean accepts(Consumer<Map<String, String>> parser, Map<String, String> parameters) {
        try {
            parser.accept(parameters);
            return true;
        } catch (DriverException e) {
            return false;
        }
    }

    private static boolean storageClassAccepted(Path dir, Map<String, String> parameters) {
        return HelmChart.refusal(HelmChart.valuesFile(dir, "sc", Map.of("storageClasses",
                List.of(Map.of("name", "candidate", "parameters", parameters))))).isEmpty();
    }

    private static boolean attributesClassAccepted(Path dir, Map<String, String> parameters) {
        return HelmChart.refusal(HelmChart.valuesFile(dir, "vac", Map.of("volumeAttributesClasses",
                List.of(Map.of("name", "candidate", "parameters", parameters))))).isEmpty();
    }
}
