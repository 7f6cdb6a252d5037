package io.lvmqos.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TopologyTest {

    static Csi.TopologyRequirement.Builder requirement() {
        return Csi.TopologyRequirement.newBuilder();
    }

    @Test
    void aNodesTopologyHasOneSegment() {
        assertEquals(Map.of("topology.lvmqos.csi.io/node", "node1"), Topology.of("node1").getSegmentsMap());
    }

    @Test
    void aTopologyNamesItsNode() {
        assertTrue(Topology.names(Topology.of("node1"), "node1"));
    }

    @Test
    void aTopologyDoesNotNameAnotherNode() {
        assertFalse(Topology.names(Topology.of("node1"), "node2"));
    }

    @Test
    void segmentsOfOtherKeysAreIgnored() {
        Csi.Topology topology = Csi.Topology.newBuilder().putSegments("kubernetes.io/hostname", "node1")
                .putSegments("topology.lvmqos.csi.io/node", "node1").build();
        assertTrue(Topology.names(topology, "node1"));
    }

    @Test
    void aTopologyWithoutOurKeyNamesNoNode() {
        Csi.Topology topology = Csi.Topology.newBuilder().putSegments("kubernetes.io/hostname", "node1").build();
        assertFalse(Topology.names(topology, "node1"));
    }

    @Test
    void noRequirementAllowsAnyNode() {
        assertTrue(Topology.allows(requirement().build(), "node1"));
    }

    @Test
    void aRequisiteNamingTheNodeAllowsIt() {
        assertTrue(Topology.allows(requirement().addRequisite(Topology.of("node2"))
                .addRequisite(Topology.of("node1")).build(), "node1"));
    }

    @Test
    void aRequisiteNamingOnlyOtherNodesRefusesIt() {
        assertFalse(Topology.allows(requirement().addRequisite(Topology.of("node2")).build(), "node1"));
    }

    @Test
    void theRequisiteDecidesWhenAPreferredNodeIsAnother() {
        assertTrue(Topology.allows(requirement().addRequisite(Topology.of("node1"))
                .addRequisite(Topology.of("node2")).addPreferred(Topology.of("node2")).build(), "node1"));
    }

    @Test
    void withoutRequisiteAPreferredNamingTheNodeAllowsIt() {
        assertTrue(Topology.allows(requirement().addPreferred(Topology.of("node1")).build(), "node1"));
    }

    @Test
    void withoutRequisiteAPreferredNamingOnlyOtherNodesRefusesIt() {
        assertFalse(Topology.allows(requirement().addPreferred(Topology.of("node2")).build(), "node1"));
    }
}
