package io.lvmqos.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.volume.VolumeId.Kind;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class VolumeIdTest {

    static final String VOL = LvmNames.volumeLvName("pvc-1");
    static final String SNAP = LvmNames.snapshotLvName("snapshot-1");

    @Test
    void aVolumeIdReadsBackFromItsText() {
        VolumeId id = new VolumeId(Kind.VOLUME, "node-1.example.com", "vg0", VOL);
        assertEquals(Optional.of(id), VolumeId.parse(Kind.VOLUME, id.toString()));
    }

    @Test
    void aSnapshotIdReadsBackFromItsText() {
        VolumeId id = new VolumeId(Kind.SNAPSHOT, "node1", "vg-data", SNAP);
        assertEquals(Optional.of(id), VolumeId.parse(Kind.SNAPSHOT, id.toString()));
    }

    @Test
    void aVolumeIdIsPrefixNodeGroupAndLv() {
        assertEquals("lvmqos/node1/vg0/" + VOL, new VolumeId(Kind.VOLUME, "node1", "vg0", VOL).toString());
    }

    @Test
    void aSnapshotIdHasItsOwnPrefix() {
        assertEquals("lvmqos-snap/node1/vg0/" + SNAP, new VolumeId(Kind.SNAPSHOT, "node1", "vg0", SNAP).toString());
    }

    @Test
    void parsingGivesEachPart() {
        assertEquals(Optional.of(new VolumeId(Kind.VOLUME, "node1", "vg0", "vol_x")),
                VolumeId.parse(Kind.VOLUME, "lvmqos/node1/vg0/vol_x"));
    }

    @Test
    void theLvmPathIsGroupSlashLv() {
        assertEquals("vg0/vol_x", new VolumeId(Kind.VOLUME, "node1", "vg0", "vol_x").lvmPath());
    }

    @ParameterizedTest(name = "\"{0}\"")
    @ValueSource(strings = {
            "reallyfakevolumeid",
            "",
            "lvmqos",
            "lvmqos/node1/vg0",
            "lvmqos/node1/vg0/vol_x/extra",
            "lvmqos/node1/vg0/vol_x/",
            "/node1/vg0/vol_x",
            "other/node1/vg0/vol_x",
            "LVMQOS/node1/vg0/vol_x",
            "lvmqos-snap/node1/vg0/vol_x",
            "lvmqos/node1/vg0/snap_x",
            "lvmqos/node1/vg0/data",
            "lvmqos/node1/vg0/",
            "lvmqos/node1//vol_x",
            "lvmqos//vg0/vol_x",
            "lvmqos/Node1/vg0/vol_x",
            "lvmqos/-node1/vg0/vol_x",
            "lvmqos/node1-/vg0/vol_x",
            "lvmqos/node_1/vg0/vol_x",
            "lvmqos/node 1/vg0/vol_x",
            "lvmqos/node1/-vg0/vol_x",
            "lvmqos/node1/vg0/vol_x y",
            "lvmqos/node1/../vol_x"})
    void volumeIdsWeDidNotIssueParseToEmpty(String text) {
        assertEquals(Optional.empty(), VolumeId.parse(Kind.VOLUME, text));
    }

    @ParameterizedTest(name = "\"{0}\"")
    @ValueSource(strings = {"reallyfakesnapshotid", "lvmqos/node1/vg0/snap_x", "lvmqos-snap/node1/vg0/vol_x",
            "lvmqos-snap/node1/vg0/snap_x/y"})
    void snapshotIdsWeDidNotIssueParseToEmpty(String text) {
        assertEquals(Optional.empty(), VolumeId.parse(Kind.SNAPSHOT, text));
    }

    @Test
    void aNodeNameOfMoreThan253CharactersIsRefused() {
        assertEquals(Optional.empty(), VolumeId.parse(Kind.VOLUME, "lvmqos/" + "n".repeat(254) + "/vg0/vol_x"));
    }

    @Test
    void aNodeNameOf253CharactersIsAccepted() {
        String node = "n".repeat(253);
        assertEquals(node, VolumeId.parse(Kind.VOLUME, "lvmqos/" + node + "/vg0/vol_x").orElseThrow().node());
    }

    /** An AWS node name: with today's full form its snapshot ids had 131 bytes. */
    static final String AWS_NODE = "ip-10-100-200-250.ap-southeast-2.compute.internal";
    static final String LONGEST_SNAP = LvmNames.snapshotLvName("x".repeat(128));

    @Test
    void shortNamesKeepTheReadableForm() {
        VolumeId id = VolumeId.issue(Kind.VOLUME, "node1", "vg0", VOL);
        assertEquals("lvmqos/node1/vg0/" + VOL, id.toString());
        assertEquals("node1", id.node());
    }

    @Test
    void anIdThatWouldPassTheLimitCarriesTheNodesToken() {
        VolumeId id = VolumeId.issue(Kind.SNAPSHOT, AWS_NODE, "lvmqos", LONGEST_SNAP);

        assertTrue(id.toString().getBytes(StandardCharsets.UTF_8).length <= VolumeId.MAX_BYTES, id.toString());
        assertEquals(VolumeId.tokenOf(AWS_NODE), id.node());
        assertEquals(Optional.of(id), VolumeId.parse(Kind.SNAPSHOT, id.toString()));
        assertTrue(id.isOn(AWS_NODE));
        assertFalse(id.isOn("ip-10-100-200-251.ap-southeast-2.compute.internal"));
        assertTrue(id.nodeDescription().contains(id.node()), id.nodeDescription());
    }

    @ParameterizedTest(name = "a node name of {0} characters")
    @ValueSource(ints = {1, 49, 63, 100, 200, 253})
    void everyIdFitsWithAnyNodeNameAndTheLongestVolumeGroup(int nodeLength) {
        String node = "n".repeat(nodeLength);
        String vg = "v".repeat(VolumeId.MAX_VOLUME_GROUP_LENGTH);
        for (VolumeId id : List.of(VolumeId.issue(Kind.VOLUME, node, vg, LvmNames.volumeLvName("y".repeat(128))),
                VolumeId.issue(Kind.SNAPSHOT, node, vg, LONGEST_SNAP))) {
            assertTrue(id.toString().getBytes(StandardCharsets.UTF_8).length <= VolumeId.MAX_BYTES,
                    id.toString().length() + " bytes: " + id);
            assertTrue(id.isOn(node));
            assertEquals(Optional.of(id), VolumeId.parse(id.kind(), id.toString()));
        }
    }

    @Test
    void onlyANodesNameIsIssuedForNotAToken() {
        String tokenOfA = VolumeId.tokenOf("a");

        assertThrows(IllegalArgumentException.class, () -> VolumeId.issue(Kind.VOLUME, tokenOfA, "a", VOL));
        assertFalse(VolumeId.issue(Kind.VOLUME, "b", "a", VOL).isOn("a"));
    }

    @Test
    void aLongIdIssuedBeforeTokensStillParsesAndNamesTheSameVolume() {
        String legacy = "lvmqos-snap/" + AWS_NODE + "/lvmqos/" + LONGEST_SNAP;
        assertTrue(legacy.length() > VolumeId.MAX_BYTES);

        VolumeId parsed = VolumeId.parse(Kind.SNAPSHOT, legacy).orElseThrow();

        assertEquals(legacy, parsed.toString());
        assertTrue(parsed.isOn(AWS_NODE));
        assertTrue(parsed.sameVolume(VolumeId.issue(Kind.SNAPSHOT, AWS_NODE, "lvmqos", LONGEST_SNAP)));
        assertFalse(parsed.sameVolume(VolumeId.issue(Kind.SNAPSHOT, "other", "lvmqos", LONGEST_SNAP)));
    }

    @Test
    void aTokenIsNeverANodeName() {
        String token = VolumeId.tokenOf(AWS_NODE);
        assertFalse(NodeIds.isValid(token), token);
        assertEquals(Optional.empty(), VolumeId.parse(Kind.VOLUME, "lvmqos/N0123/vg0/" + VOL), "a malformed token");
        assertEquals(Optional.empty(), VolumeId.parse(Kind.VOLUME, "lvmqos/n0123456789abcdef/vg0/" + VOL)
                .filter(id -> id.isOn(AWS_NODE)), "lowercase is a node name, not a token");
    }

    @Test
    void aVolumeGroupTooLongForIdsIsRefusedWithTheLimit() {
        VolumeId.requireFitsInIds("v".repeat(VolumeId.MAX_VOLUME_GROUP_LENGTH));
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> VolumeId.requireFitsInIds("v".repeat(VolumeId.MAX_VOLUME_GROUP_LENGTH + 1)));
        assertTrue(refused.getMessage().contains("at most " + VolumeId.MAX_VOLUME_GROUP_LENGTH), refused.getMessage());
    }

    @Test
    void theConstructorRefusesASnapshotLvInAVolumeId() {
        assertThrows(IllegalArgumentException.class, () -> new VolumeId(Kind.VOLUME, "node1", "vg0", SNAP));
    }

    @Test
    void theConstructorRefusesAnInvalidNode() {
        assertThrows(IllegalArgumentException.class, () -> new VolumeId(Kind.VOLUME, "Node_1", "vg0", VOL));
    }
}
