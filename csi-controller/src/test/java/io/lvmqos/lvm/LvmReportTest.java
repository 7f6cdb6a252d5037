package io.lvmqos.lvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.errors.DriverException;
import io.lvmqos.lvm.LogicalVolume.SegmentType;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Parses lvs output captured from lvm 2.03.16: a thin pool with two thin LVs and snapshots, and a linear LV. */
class LvmReportTest {

    static final List<LogicalVolume> VOLUMES = LvmReport.logicalVolumes(fixture("/lvm/lvs-thin-and-linear.json"));

    static String fixture(String resource) {
        try (InputStream in = LvmReportTest.class.getResourceAsStream(resource)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static LogicalVolume lv(String name) {
        return VOLUMES.stream().filter(lv -> lv.name().equals(name)).findFirst().orElseThrow();
    }

    /** Captured from lvm 2.03.16: vgs --reportformat json -o pv_name -- VG, one row per PV. */
    @Test
    void physicalVolumesOfAGroupReport() {
        String json = """
                  {
                      "report": [
                          {
                              "vg": [
                                  {"pv_name":"/dev/loop0"},
                                  {"pv_name":"/dev/vdb1"}
                              ]
                          }
                      ]
                  }
                """;
        assertEquals(List.of(Path.of("/dev/loop0"), Path.of("/dev/vdb1")), LvmReport.physicalVolumes(json));
    }

    /** lvs --all -o lv_name,lv_attr: the fifth attribute is the device's state, 's' when suspended. */
    @Test
    void suspendedVolumesAreNamedAsTheLvToRefresh() {
        String json = """
                  {
                      "report": [
                          {
                              "lv": [
                                  {"lv_name":"[lvol0_pmspare]", "lv_attr":"ewi-------"},
                                  {"lv_name":"thinpool", "lv_attr":"twi-aotz--"},
                                  {"lv_name":"[thinpool_tdata]", "lv_attr":"Twi-so----"},
                                  {"lv_name":"[thinpool_tmeta]", "lv_attr":"ewi-so----"},
                                  {"lv_name":"vol_a", "lv_attr":"Vwi-aotz--"},
                                  {"lv_name":"vol_b", "lv_attr":"Vwi-sotz--"},
                                  {"lv_name":"vol_c", "lv_attr":"Vwi---tz-k"},
                                  {"lv_name":"lin", "lv_attr":"-wi-s-----"}
                              ]
                          }
                      ]
                  }
                """;
        assertEquals(List.of("thinpool", "vol_b", "lin"), LvmReport.suspended(json));
    }

    /**
     * lvm 2.03.16 in the guest, 2026-12-06: a volume (id 1) and its snapshot (id 2) in an active
     * pool, and an empty pool deactivated.
     */
    @Test
    void eachPoolIsRecordedWithItsTransactionAndItsThinIds() {
        String json = """
                  {
                      "report": [
                          {
                              "lv": [
                                  {"lv_name":"[lvol0_pmspare]", "lv_active":"", "pool_lv":"", "thin_id":"", "transaction_id":"", "segtype":"linear"},
                                  {"lv_name":"p2", "lv_active":"", "pool_lv":"", "thin_id":"", "transaction_id":"0", "segtype":"thin-pool"},
                                  {"lv_name":"[p2_tdata]", "lv_active":"", "pool_lv":"", "thin_id":"", "transaction_id":"", "segtype":"linear"},
                                  {"lv_name":"[p2_tmeta]", "lv_active":"", "pool_lv":"", "thin_id":"", "transaction_id":"", "segtype":"linear"},
                                  {"lv_name":"s1", "lv_active":"", "pool_lv":"thinpool", "thin_id":"2", "transaction_id":"1", "segtype":"thin"},
                                  {"lv_name":"thinpool", "lv_active":"active", "pool_lv":"", "thin_id":"", "transaction_id":"2", "segtype":"thin-pool"},
                                  {"lv_name":"[thinpool_tdata]", "lv_active":"active", "pool_lv":"", "thin_id":"", "transaction_id":"", "segtype":"linear"},
                                  {"lv_name":"[thinpool_tmeta]", "lv_active":"active", "pool_lv":"", "thin_id":"", "transaction_id":"", "segtype":"linear"},
                                  {"lv_name":"v1", "lv_active":"active", "pool_lv":"thinpool", "thin_id":"1", "transaction_id":"0", "segtype":"thin"}
                              ]
                          }
                      ]
                  }
                """;
        assertEquals(List.of(new HalfSentPoolChange.Recorded("p2", false, 0, Map.of()),
                        new HalfSentPoolChange.Recorded("thinpool", true, 2, Map.of("v1", 1L, "s1", 2L))),
                LvmReport.recordedPools(json));
    }

    /** As lvm 2.03.16 printed it in the guest for a pool of 200 MiB. */
    @Test
    void aPoolsMetadataSizeIsReadInBytes() {
        String json = """
                  {
                      "report": [
                          {
                              "lv": [
                                  {"lv_name":"pool", "lv_metadata_size":"4194304"}
                              ]
                          }
                      ]
                  }
                """;
        assertEquals(4194304, LvmReport.metadataSize(json));
        assertThrows(DriverException.Internal.class, () -> LvmReport.metadataSize("{\"report\": [{\"lv\": []}]}"));
    }

    /** A pool extended into a second segment has a row per segment: recorded once. */
    @Test
    void aPoolOfTwoSegmentsIsRecordedOnce() {
        String json = """
                  {"report": [{"lv": [
                      {"lv_name":"thinpool", "lv_active":"active", "pool_lv":"", "thin_id":"", "transaction_id":"5", "segtype":"thin-pool"},
                      {"lv_name":"thinpool", "lv_active":"active", "pool_lv":"", "thin_id":"", "transaction_id":"5", "segtype":"thin-pool"}
                  ]}]}
                """;
        assertEquals(List.of(new HalfSentPoolChange.Recorded("thinpool", true, 5, Map.of())),
                LvmReport.recordedPools(json));
    }

    @Test
    void hiddenVolumesInBracketsAreLeftOut() {
        assertEquals(List.of("snap_k", "snap_t", "thinpool", "vol_a", "vol_t"),
                VOLUMES.stream().map(LogicalVolume::name).toList());
    }

    @Test
    void everyVolumeKnowsItsGroup() {
        assertTrue(VOLUMES.stream().allMatch(lv -> lv.volumeGroup().equals("vg0")));
    }

    @ParameterizedTest(name = "{0} is {1} bytes")
    @CsvSource({"vol_a, 104857600", "vol_t, 209715200", "snap_t, 209715200", "thinpool, 536870912"})
    void sizesAreInBytes(String name, long bytes) {
        assertEquals(bytes, lv(name).sizeBytes());
    }

    @ParameterizedTest(name = "{0} is {1}")
    @CsvSource({"vol_a, LINEAR", "vol_t, THIN", "snap_k, THIN", "thinpool, THIN_POOL"})
    void segmentTypesAreNamed(String name, SegmentType type) {
        assertEquals(type, lv(name).segmentType());
    }

    @ParameterizedTest(name = "{0} active: {1}")
    @CsvSource({"vol_a, true", "vol_t, true", "snap_t, true", "thinpool, true", "snap_k, false"})
    void activeComesFromTheFifthAttributeCharacter(String name, boolean active) {
        assertEquals(active, lv(name).active());
    }

    @ParameterizedTest(name = "{0} open: {1}")
    @CsvSource({"thinpool, true", "vol_a, false", "snap_t, false", "snap_k, false"})
    void openIsTheDeviceOpenFlag(String name, boolean open) {
        assertEquals(open, lv(name).open());
    }

    @ParameterizedTest(name = "{0} skips activation: {1}")
    @CsvSource({"snap_k, true", "snap_t, false", "vol_a, false"})
    void activationSkipIsRead(String name, boolean skip) {
        assertEquals(skip, lv(name).activationSkip());
    }

    @Test
    void thinVolumesZero() {
        assertEquals(Optional.of(true), lv("vol_t").zeroing());
    }

    @Test
    void zeroingIsUnknownForALinearVolume() {
        assertEquals(Optional.empty(), lv("vol_a").zeroing());
    }

    @Test
    void keyValueTagsBecomeAMap() {
        assertEquals(Map.of("lvmqos.name", "YWJj", "lvmqos.riops", "0.5/GiB"), lv("vol_a").tags());
    }

    @Test
    void noTagsIsAnEmptyMap() {
        assertEquals(Map.of(), lv("vol_t").tags());
    }

    @Test
    void aSnapshotKnowsItsPoolAndOrigin() {
        LogicalVolume snapshot = lv("snap_k");
        assertEquals(Optional.of("thinpool"), snapshot.pool());
        assertEquals(Optional.of("vol_t"), snapshot.origin());
    }

    @Test
    void aLinearVolumeHasNoPoolAndNoOrigin() {
        assertEquals(Optional.empty(), lv("vol_a").pool());
        assertEquals(Optional.empty(), lv("vol_a").origin());
    }

    @Test
    void theCreationTimeIsAnInstant() {
        assertEquals(Instant.parse("2026-12-02T11:09:19Z"), lv("snap_k").created());
    }

    @Test
    void theDevicePathIsTheDeviceMapperPath() {
        assertEquals(Path.of("/dev/mapper/vg0-vol_a"), lv("vol_a").devicePath());
    }

    @Test
    void aPoolReportsDataAndMetadataUse() {
        assertEquals(OptionalDouble.of(0.0), lv("thinpool").dataPercent());
        assertEquals(OptionalDouble.of(10.94), lv("thinpool").metadataPercent());
    }

    @Test
    void aLinearVolumeReportsNoUse() {
        assertEquals(OptionalDouble.empty(), lv("vol_a").dataPercent());
        assertEquals(OptionalDouble.empty(), lv("vol_a").metadataPercent());
    }

    @Test
    void tagValuesMayContainEqualsSigns() {
        assertEquals(Map.of("k", "a=b"), LvmReport.tags("k=a=b"));
    }

    @Test
    void aTagWithoutValueMapsToEmpty() {
        assertEquals(Map.of("plain", "", "k", "v"), LvmReport.tags("plain,k=v"));
    }

    @Test
    void anEmptyTagListIsNoTags() {
        assertEquals(Map.of(), LvmReport.tags(""));
    }

    @Test
    void volumeGroupsAreReadInBytes() {
        String json = """
                  {
                      "report": [
                          {
                              "vg": [
                                  {"vg_name":"vg0", "vg_size":"1069547520", "vg_free":"322961408", "vg_extent_size":"4194304"}
                              ]
                          }
                      ]
                  }
                """;
        assertEquals(List.of(new VolumeGroup("vg0", 1069547520L, 322961408L, 4194304L)), LvmReport.volumeGroups(json));
    }

    @Test
    void anEmptyReportHasNoVolumes() {
        assertEquals(List.of(), LvmReport.logicalVolumes("{\"report\": [{\"lv\": []}]}"));
    }

    @Test
    void aReportThatIsNotJsonIsInternal() {
        assertThrows(DriverException.Internal.class, () -> LvmReport.logicalVolumes("  WARNING: not json"));
    }

    @Test
    void stripedSegmentsCountAsLinear() {
        assertEquals(SegmentType.LINEAR, SegmentType.of("striped"));
    }

    @Test
    void unknownSegmentTypesAreOther() {
        assertEquals(SegmentType.OTHER, SegmentType.of("raid1"));
    }

    @Test
    void creationTimesKeepTheirOffset() {
        assertEquals(Instant.parse("2026-12-02T09:09:16Z"), LvmReport.parseTime("2026-12-02 11:09:16 +0200"));
    }

    @Test
    void aVolumeGroupRoundsSizesUpToWholeExtents() {
        VolumeGroup group = new VolumeGroup("vg0", 1L << 30, 1L << 30, 4 << 20);
        assertEquals(8 << 20, group.roundUpToExtent((4 << 20) + 1));
    }

    @Test
    void aVolumeGroupRoundsZeroToOneExtent() {
        assertEquals(4 << 20, new VolumeGroup("vg0", 1L << 30, 1L << 30, 4 << 20).roundUpToExtent(0));
    }

    @Test
    void aVolumeIsThinOrAPool() {
        assertTrue(lv("vol_t").isThin());
        assertFalse(lv("vol_t").isThinPool());
        assertTrue(lv("thinpool").isThinPool());
    }

    /*
     * Captured with lvm 2.03.16 and the driver's own LV_FIELDS on a metadata-only VG (--driverloaded n, hence the
     * X in lv_attr): vol_a was created, then vol_b, then vol_a extended, so vol_a has two segments. segtype and zero
     * are segment fields, and lvs prints one row per segment when a segment field is asked for.
     */
    @Test
    void aVolumeOfTwoSegmentsIsListedOnce() {
        List<LogicalVolume> volumes = LvmReport.logicalVolumes(fixture("/lvm/lvs-linear-two-segments.json"));
        assertEquals(List.of("vol_a", "vol_b"), volumes.stream().map(LogicalVolume::name).toList());
    }

    /** lvs with the VG's fields added, as Lvm.contents asks for them (shape of lvm 2.03.16 output). */
    private static final String LVS_WITH_VG_FIELDS = """
              {
                  "report": [
                      {
                          "lv": [
                              {"lv_name":"thinpool", "vg_name":"vg0", "lv_size":"536870912", "lv_attr":"twi-aotz--", "lv_tags":"", "pool_lv":"", "origin":"", "lv_time":"2026-12-02 11:09:16 +0000", "lv_dm_path":"/dev/mapper/vg0-thinpool", "data_percent":"0.00", "metadata_percent":"10.94", "zero":"1", "lv_skip_activation":"0", "lv_device_open":"1", "segtype":"thin-pool", "vg_size":"2143289344", "vg_free":"1493172224", "vg_extent_size":"4194304"},
                              {"lv_name":"vol_a", "vg_name":"vg0", "lv_size":"104857600", "lv_attr":"-wi-a-----", "lv_tags":"lvmqos.name=YWJj", "pool_lv":"", "origin":"", "lv_time":"2026-12-02 11:09:16 +0000", "lv_dm_path":"/dev/mapper/vg0-vol_a", "data_percent":"", "metadata_percent":"", "zero":"-1", "lv_skip_activation":"0", "lv_device_open":"0", "segtype":"linear", "vg_size":"2143289344", "vg_free":"1493172224", "vg_extent_size":"4194304"}
                          ]
                      }
                  ]
              }
            """;

    @Test
    void anLvsReportWithVolumeGroupFieldsGivesTheGroupAndItsVolumes() {
        assertEquals(Optional.of(new VolumeGroup("vg0", 2143289344L, 1493172224L, 4194304L)),
                LvmReport.groupOfLvReport(LVS_WITH_VG_FIELDS));
        assertEquals(List.of("thinpool", "vol_a"),
                LvmReport.logicalVolumes(LVS_WITH_VG_FIELDS).stream().map(LogicalVolume::name).toList());
        assertTrue(LvmReport.LV_AND_VG_FIELDS.containsAll(LvmReport.LV_FIELDS));
        assertEquals(1, LvmReport.LV_AND_VG_FIELDS.stream().filter("vg_name"::equals).count());
    }

    @Test
    void anEmptyLvsReportHasNoGroup() {
        assertEquals(Optional.empty(), LvmReport.groupOfLvReport("{\"report\": [{\"lv\": []}]}"));
    }

    /** lv_attr's ninth character of a thin pool, as lvm 2.03 printed it in the UML guest (docs/faults.md). */
    @ParameterizedTest
    @CsvSource({"twi-aotz--, OK", "twi-aotzD-, OUT_OF_DATA_SPACE", "twi-aotzM-, METADATA_READ_ONLY",
            "twi-aotzF-, FAILED", "twi-a-tz, OK"})
    void aThinPoolsHealthComesFromItsAttr(String attr, LogicalVolume.PoolHealth health) {
        assertEquals(health, LogicalVolume.PoolHealth.ofAttr(attr));
    }

    @Test
    void aFullPoolIsReportedOutOfDataSpaceAndItsThinVolumesAreNot() {
        String json = fixture("/lvm/lvs-thin-and-linear.json").replace("\"lv_attr\":\"twi-aotz--\"",
                "\"lv_attr\":\"twi-aotzD-\"").replace("\"lv_attr\":\"Vwi-a-tz--\"", "\"lv_attr\":\"Vwi-a-tzD-\"");
        List<LogicalVolume> lvs = LvmReport.logicalVolumes(json);
        assertEquals(LogicalVolume.PoolHealth.OUT_OF_DATA_SPACE,
                lvs.stream().filter(LogicalVolume::isThinPool).findFirst().orElseThrow().health());
        assertTrue(lvs.stream().filter(LogicalVolume::isThin).allMatch(lv -> lv.health() == LogicalVolume.PoolHealth.OK));
    }
}
