package io.lvmqos.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.lvmqos.volume.VolumeId.Kind;
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

    @Test
    void theConstructorRefusesASnapshotLvInAVolumeId() {
        assertThrows(IllegalArgumentException.class, () -> new VolumeId(Kind.VOLUME, "node1", "vg0", SNAP));
    }

    @Test
    void theConstructorRefusesAnInvalidNode() {
        assertThrows(IllegalArgumentException.class, () -> new VolumeId(Kind.VOLUME, "Node_1", "vg0", VOL));
    }
}
