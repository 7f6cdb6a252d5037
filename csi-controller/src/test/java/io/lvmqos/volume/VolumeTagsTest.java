package io.lvmqos.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class VolumeTagsTest {

    static final QosSpec QOS = new QosSpec(new Limit.Fixed(52428800), new Limit.Fixed(1048576),
            new Limit.PerGiB(new BigDecimal("10")), Limit.UNLIMITED);

    static Stream<String> csiNames() {
        return Stream.of("pvc-0f1e2d3c-4b5a-6978-8695-a4b3c2d1e0f9", "", "a", "with/slash and space",
                "Ünïcödé ボリューム 卷", "💾 disk", "tab\tnewline\n", "a".repeat(128), "é".repeat(128),
                "💾".repeat(128));
    }

    @ParameterizedTest
    @MethodSource("csiNames")
    void namesReadBackExactly(String name) {
        assertEquals(Optional.of(name), VolumeTags.decodeName(VolumeTags.encodeName(name)));
    }

    @ParameterizedTest
    @MethodSource("csiNames")
    void encodedNamesUseOnlyCharactersLvmAllowsInTags(String name) {
        String encoded = VolumeTags.encodeName(name);
        assertTrue(encoded.matches("[A-Za-z0-9_-]*"), encoded);
    }

    @Test
    void anEncodedNameOfMaximumLengthFitsAnLvmTag() {
        String tag = VolumeTags.NAME + "=" + VolumeTags.encodeName("💾".repeat(128));
        assertTrue(tag.length() <= 1024, () -> "tag length " + tag.length());
    }

    @Test
    void aValueThatIsNotBase64UrlDecodesToNothing() {
        assertEquals(Optional.empty(), VolumeTags.decodeName("not base64!"));
    }

    @Test
    void qosTagsArePrefixedFields() {
        assertEquals(Map.of("lvmqos.qos.rbps", "52428800", "lvmqos.qos.wbps", "1048576", "lvmqos.qos.riops", "10/GiB"),
                VolumeTags.qosTags(QOS));
    }

    @Test
    void qosReadsBackFromItsTags() {
        assertEquals(QOS, VolumeTags.qosOf(VolumeTags.qosTags(QOS)));
    }

    @Test
    void qosIgnoresTheOtherTags() {
        Map<String, String> tags = new TreeMap<>(VolumeTags.qosTags(QOS));
        tags.put(VolumeTags.NAME, "YWJj");
        tags.put(VolumeTags.REQUESTED_BYTES, "1073741824");
        tags.put("someone.else", "x");
        assertEquals(QOS, VolumeTags.qosOf(tags));
    }

    @Test
    void noQosTagsMeanNoLimits() {
        assertEquals(QosSpec.NONE, VolumeTags.qosOf(Map.of(VolumeTags.NAME, "YWJj")));
    }

    @Test
    void theParametersDigestIsSixteenHexDigits() {
        assertTrue(VolumeTags.parametersDigest(new TreeMap<>(Map.of("iops", "300"))).matches("[0-9a-f]{16}"));
    }

    @Test
    void theParametersDigestIsStable() {
        assertEquals(VolumeTags.parametersDigest(new TreeMap<>(Map.of("iops", "300", "lvmType", "thin"))),
                VolumeTags.parametersDigest(new TreeMap<>(Map.of("iops", "300", "lvmType", "thin"))));
    }

    @Test
    void theParametersDigestDoesNotDependOnInsertionOrder() {
        TreeMap<String, String> one = new TreeMap<>();
        one.put("iops", "300");
        one.put("lvmType", "thin");
        one.put("volumeGroup", "vg0");
        TreeMap<String, String> other = new TreeMap<>();
        other.put("volumeGroup", "vg0");
        other.put("lvmType", "thin");
        other.put("iops", "300");
        assertEquals(VolumeTags.parametersDigest(one), VolumeTags.parametersDigest(other));
    }

    @Test
    void theParametersDigestChangesWithAValue() {
        assertNotEquals(VolumeTags.parametersDigest(new TreeMap<>(Map.of("iops", "300"))),
                VolumeTags.parametersDigest(new TreeMap<>(Map.of("iops", "301"))));
    }

    @Test
    void theParametersDigestSeparatesKeysFromValues() {
        assertNotEquals(VolumeTags.parametersDigest(new TreeMap<>(Map.of("ab", "c"))),
                VolumeTags.parametersDigest(new TreeMap<>(Map.of("a", "bc"))));
    }
}
