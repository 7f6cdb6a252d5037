package io.lvmqos.volume;

import csi.v1.Csi;
import java.util.List;

/** Every volume is reachable only on the node that holds its volume group. */
public final class Topology {

    public static final String NODE_KEY = "topology.lvmqos.csi.io/node";

    private Topology() {
    }

    public static Csi.Topology of(String node) {
        return Csi.Topology.newBuilder().putSegments(NODE_KEY, node).build();
    }

    /** True when {@code topology} names this node (segments of other drivers' keys are ignored). */
    public static boolean names(Csi.Topology topology, String node) {
        return node.equals(topology.getSegmentsMap().get(NODE_KEY));
    }

    /** Whether a volume may be placed on {@code node} under the request's accessibility requirements. */
    public static boolean allows(Csi.TopologyRequirement requirement, String node) {
        List<Csi.Topology> requisite = requirement.getRequisiteList();
        List<Csi.Topology> candidates = requisite.isEmpty() ? requirement.getPreferredList() : requisite;
        return candidates.isEmpty() || candidates.stream().anyMatch(t -> names(t, node));
    }
}
