package io.lvmqos.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.errors.DriverException;
import io.lvmqos.volume.VolumeParameters.LvmType;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class VolumeParametersTest {

    static final VolumeParameters DEFAULTS =
            new VolumeParameters(Optional.empty(), LvmType.LINEAR, "thinpool", BigDecimal.ONE, QosSpec.NONE);

    static DriverException.InvalidArgument refused(Map<String, String> parameters) {
        return assertThrows(DriverException.InvalidArgument.class, () -> VolumeParameters.parse(parameters));
    }

    @Test
    void noParametersGiveALinearVolumeInTheDefaultGroupWithoutLimits() {
        assertEquals(DEFAULTS, VolumeParameters.parse(Map.of()));
    }

    @Test
    void readsTheVolumeGroup() {
        assertEquals(Optional.of("vg-data"), VolumeParameters.parse(Map.of("volumeGroup", "vg-data")).volumeGroup());
    }

    @Test
    void readsLinear() {
        assertEquals(LvmType.LINEAR, VolumeParameters.parse(Map.of("lvmType", "linear")).lvmType());
    }

    @Test
    void thinUsesTheDefaultPoolWhenNoneIsNamed() {
        VolumeParameters parameters = VolumeParameters.parse(Map.of("lvmType", "thin"));
        assertEquals(LvmType.THIN, parameters.lvmType());
        assertEquals("thinpool", parameters.thinPool());
    }

    @Test
    void readsTheThinPool() {
        assertEquals("pool0", VolumeParameters.parse(Map.of("lvmType", "thin", "thinPool", "pool0")).thinPool());
    }

    @ParameterizedTest(name = "overprovisionRatio={0}")
    @ValueSource(strings = {"1", "1.5", "4", "1e1"})
    void readsTheOverprovisionRatioOfAThinVolume(String ratio) {
        VolumeParameters parameters = VolumeParameters.parse(Map.of("lvmType", "thin", "overprovisionRatio", ratio));
        assertEquals(0, new BigDecimal(ratio).compareTo(parameters.overprovisionRatio()));
    }

    @Test
    void readsTheQosKeys() {
        assertEquals(QosParameters.parse(Map.of("iops", "300", "readBPS", "1Mi")),
                VolumeParameters.parse(Map.of("iops", "300", "readBPS", "1Mi")).qos());
    }

    @Test
    void ignoresKubernetesOwnKeys() {
        assertEquals(DEFAULTS, VolumeParameters.parse(Map.of(
                "csi.storage.k8s.io/pvc/name", "data",
                "csi.storage.k8s.io/pvc/namespace", "default",
                "csi.storage.k8s.io/pv/name", "pvc-1234",
                "csi.storage.k8s.io/fstype", "xfs")));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"foo", "IOPS", "volumegroup", "csi.storage.k8s.io", "lvmqos.io/iops"})
    void refusesAnUnknownKeyListingTheAcceptedOnes(String key) {
        String message = refused(Map.of(key, "1")).getMessage();
        assertTrue(message.contains(key), message);
        for (String accepted : VolumeParameters.acceptedKeys()) {
            assertTrue(message.contains(accepted), () -> accepted + " missing from: " + message);
        }
    }

    @Test
    void acceptedKeysArePlacementAndQosKeys() {
        assertEquals(List.of("volumeGroup", "lvmType", "thinPool", "overprovisionRatio", "iops", "bps", "readIOPS",
                "writeIOPS", "readBPS", "writeBPS", "iopsPerGiB", "bpsPerGiB", "ioWeight", "iopsFloor", "readIOPSFloor",
                "writeIOPSFloor", "bpsFloor", "readBPSFloor", "writeBPSFloor"), VolumeParameters.acceptedKeys());
    }

    @ParameterizedTest(name = "lvmType=\"{0}\"")
    @ValueSource(strings = {"", "Thin", "LINEAR", "raid1", "thin-pool"})
    void refusesAnUnknownLvmType(String type) {
        String message = refused(Map.of("lvmType", type)).getMessage();
        assertTrue(message.contains("lvmType=\"" + type + "\""), message);
    }

    @Test
    void refusesAThinPoolForALinearVolume() {
        String message = refused(Map.of("lvmType", "linear", "thinPool", "pool0")).getMessage();
        assertTrue(message.contains("thinPool"), message);
    }

    @Test
    void refusesAThinPoolWhenTheTypeDefaultsToLinear() {
        String message = refused(Map.of("thinPool", "pool0")).getMessage();
        assertTrue(message.contains("thinPool"), message);
    }

    @Test
    void refusesAnOverprovisionRatioForALinearVolume() {
        String message = refused(Map.of("overprovisionRatio", "2")).getMessage();
        assertTrue(message.contains("overprovisionRatio"), message);
    }

    @ParameterizedTest(name = "overprovisionRatio=\"{0}\"")
    @ValueSource(strings = {"0.99", "0", "-1", "", "two", "1.5.3"})
    void refusesAnOverprovisionRatioBelowOneOrUnparsable(String ratio) {
        String message = refused(Map.of("lvmType", "thin", "overprovisionRatio", ratio)).getMessage();
        assertTrue(message.contains("overprovisionRatio=\"" + ratio + "\""), message);
    }

    @ParameterizedTest(name = "volumeGroup=\"{0}\"")
    @ValueSource(strings = {"", "vg/0", "/dev/vg0", "-vg", "vg 0", ".", "..", "../etc", "vg\u00e9", "vg$(reboot)",
            "a234567890123456789012345678901234567890123456789012345678901234"})
    void refusesAnInvalidVolumeGroupName(String name) {
        String message = refused(Map.of("volumeGroup", name)).getMessage();
        assertTrue(message.contains("volumeGroup=\"" + name + "\""), message);
    }

    @ParameterizedTest(name = "volumeGroup=\"{0}\"")
    @ValueSource(strings = {"vg0", "vg-data", "VG_0.1+x", "0", "_vg", "a23456789012345678901234567890123456789012345678901234567890123"})
    void acceptsAValidVolumeGroupName(String name) {
        assertEquals(Optional.of(name), VolumeParameters.parse(Map.of("volumeGroup", name)).volumeGroup());
    }

    @ParameterizedTest(name = "thinPool=\"{0}\"")
    @ValueSource(strings = {"", "pool/x", "-pool", "pool x"})
    void refusesAnInvalidThinPoolName(String name) {
        String message = refused(Map.of("lvmType", "thin", "thinPool", name)).getMessage();
        assertTrue(message.contains("thinPool=\"" + name + "\""), message);
    }

    @ParameterizedTest(name = "{0}=\"{1}\"")
    @CsvSource(delimiter = '|', textBlock = """
            iops       | 0
            readIOPS   | 1.5
            bps        | 1.5
            writeBPS   | fast
            iopsPerGiB | -1
            """)
    void refusesAnInvalidQosValueNamingTheKey(String key, String value) {
        String message = refused(Map.of(key, value)).getMessage();
        assertTrue(message.contains(key), message);
    }

    @Test
    void refusesMixingPerGiBAndAbsoluteLimitsOfOneKind() {
        refused(Map.of("iopsPerGiB", "10", "iops", "300"));
    }

    @Test
    void significantParametersLeaveOutKubernetesKeysAndAreSorted() {
        assertEquals(List.of("iops", "lvmType", "volumeGroup"), List.copyOf(VolumeParameters.significant(Map.of(
                "volumeGroup", "vg0", "csi.storage.k8s.io/pvc/name", "data", "lvmType", "thin", "iops", "5"))
                .keySet()));
    }

    @Test
    void theRecordRefusesARatioBelowOne() {
        assertThrows(IllegalArgumentException.class, () -> new VolumeParameters(Optional.empty(), LvmType.THIN,
                "thinpool", new BigDecimal("0.5"), QosSpec.NONE));
    }

    @Test
    void lvmTypesHaveTheirParameterSpelling() {
        assertEquals("thin", LvmType.THIN.parameterValue());
        assertEquals("linear", LvmType.LINEAR.parameterValue());
    }
}
