package io.lvmqos.metadata;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Lines in the shape thin-provisioning-tools 0.9 prints them. */
class ThinToolsXmlTest {

    @Test
    void everyKindOfDifferenceIsAChangeAndSameRunsAreNot() {
        assertEquals(Optional.of(new ChunkRange(3, 1)), ThinToolsXml.deltaRange("    <different begin=\"3\" length=\"1\"/>"));
        assertEquals(Optional.of(new ChunkRange(5, 2)), ThinToolsXml.deltaRange("    <right_only begin=\"5\" length=\"2\"/>"));
        assertEquals(Optional.of(new ChunkRange(10, 1)), ThinToolsXml.deltaRange("    <left_only begin=\"10\" length=\"1\"/>"));
        assertEquals(Optional.empty(), ThinToolsXml.deltaRange("    <same begin=\"0\" length=\"3\"/>"));
        assertEquals(Optional.empty(), ThinToolsXml.deltaRange("  <diff left=\"1\" right=\"2\">"));
        assertEquals(Optional.empty(), ThinToolsXml.deltaRange("  </diff>"));
    }

    @Test
    void singleAndRangeMappingsGiveTheDevicesOwnBlocks() {
        assertEquals(Optional.of(new ChunkRange(2, 3)), ThinToolsXml.mappedRange(
                "    <range_mapping origin_begin=\"2\" data_begin=\"0\" length=\"3\" time=\"0\"/>"));
        assertEquals(Optional.of(new ChunkRange(20, 1)), ThinToolsXml.mappedRange(
                "    <single_mapping origin_block=\"20\" data_block=\"4\" time=\"0\"/>"));
        assertEquals(Optional.empty(), ThinToolsXml.mappedRange(
                "  <device dev_id=\"2\" mapped_blocks=\"7\" transaction=\"1\" creation_time=\"1\" snap_time=\"2\">"));
    }

    @Test
    void theSuperblockGivesTheBlockSize() {
        assertEquals(Optional.of(128L), ThinToolsXml.dataBlockSectors(
                "<superblock uuid=\"\" time=\"1\" transaction=\"3\" data_block_size=\"128\" nr_data_blocks=\"8192\">"));
    }

    @Test
    void aRunWithoutItsLengthIsAnErrorNotAGuess() {
        assertThrows(IllegalArgumentException.class, () -> ThinToolsXml.deltaRange("<different begin=\"3\"/>"));
    }
}
