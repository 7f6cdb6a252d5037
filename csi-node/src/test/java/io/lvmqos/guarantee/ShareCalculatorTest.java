package io.lvmqos.guarantee;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.volume.IoCostWeight;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Floors and weights turned into io.cost weights, checked against the shares io.cost would give. */
class ShareCalculatorTest {

    static final DeviceNumber DISK = new DeviceNumber(254, 0);
    static final Path ROOT = Path.of("/sys/fs/cgroup");
    static final Path KUBEPODS = ROOT.resolve("kubepods");
    static final Path BURSTABLE = KUBEPODS.resolve("burstable");
    static final Path BESTEFFORT = KUBEPODS.resolve("besteffort");
    static final Path SYSTEM = ROOT.resolve("system.slice");

    /** A cgroup tree in memory, every weight the kernel's default unless set. */
    static final class Tree implements ShareCalculator.Tree {
        final Map<Path, List<Path>> children = new HashMap<>();
        final Map<Path, IoCostWeight> weights = new HashMap<>();

        Tree add(Path... cgroups) {
            for (Path cgroup : cgroups) {
                children.computeIfAbsent(cgroup.getParent(), p -> new ArrayList<>()).add(cgroup);
                children.putIfAbsent(cgroup, new ArrayList<>());
            }
            return this;
        }

        @Override
        public List<Path> children(Path cgroup) {
            return children.getOrDefault(cgroup, List.of());
        }

        @Override
        public IoCostWeight defaultWeight(Path cgroup) {
            return IoCostWeight.DEFAULT;
        }

        @Override
        public IoCostWeight weightOn(Path cgroup, DeviceNumber disk) {
            return weights.getOrDefault(cgroup, IoCostWeight.DEFAULT);
        }

        /** The share io.cost gives the cgroup with every cgroup of the tree busy, under these weights. */
        double share(Path cgroup, Map<Path, IoCostWeight> written) {
            double share = 1;
            for (Path at = cgroup; !at.equals(ROOT); at = at.getParent()) {
                double mine = weight(at, written);
                double all = 0;
                for (Path sibling : children(at.getParent())) {
                    all += weight(sibling, written);
                }
                share *= mine / all;
            }
            return share;
        }

        private double weight(Path cgroup, Map<Path, IoCostWeight> written) {
            return written.getOrDefault(cgroup, weightOn(cgroup, DISK)).value();
        }
    }

    private static IoCostWeight w(int value) {
        return new IoCostWeight(value);
    }

    static Tree kubeletNode() {
        return new Tree().add(KUBEPODS, SYSTEM, BURSTABLE, BESTEFFORT,
                BURSTABLE.resolve("podA"), BURSTABLE.resolve("podB"),
                BESTEFFORT.resolve("podC"), BESTEFFORT.resolve("podD"));
    }

    @Test
    void aFloorOfHalfTheDiskHoldsAgainstEveryOtherCgroup() {
        Tree tree = kubeletNode();
        Path pod = BURSTABLE.resolve("podA");
        ShareCalculator.Result result = ShareCalculator.weights(ROOT, DISK,
                List.of(new ShareCalculator.Claim(pod, w(100), 0.5)), tree);
        // the unpromised half is shared as the default weights share it: podA's own eighth of it
        assertEquals(0.5 + 0.5 * 0.125, tree.share(pod, result.weights()), 1e-2);
        assertEquals(Map.of(KUBEPODS, w(300), BURSTABLE, w(500), pod, w(900)), result.weights());
        assertTrue(result.clamped().isEmpty());
    }

    @Test
    void cgroupsOffThePathKeepTheirWeights() {
        Tree tree = kubeletNode();
        ShareCalculator.Result result = ShareCalculator.weights(ROOT, DISK,
                List.of(new ShareCalculator.Claim(BURSTABLE.resolve("podA"), w(100), 0.5)), tree);
        for (Path untouched : List.of(SYSTEM, BESTEFFORT, BURSTABLE.resolve("podB"), BESTEFFORT.resolve("podC"))) {
            assertFalse(result.weights().containsKey(untouched), untouched + " was given a weight");
        }
    }

    @Test
    void floorsInTwoQosClassesBothHold() {
        Tree tree = kubeletNode();
        Path a = BURSTABLE.resolve("podA");
        Path c = BESTEFFORT.resolve("podC");
        ShareCalculator.Result result = ShareCalculator.weights(ROOT, DISK,
                List.of(new ShareCalculator.Claim(a, w(100), 0.3), new ShareCalculator.Claim(c, w(100), 0.4)), tree);
        assertTrue(tree.share(a, result.weights()) >= 0.3, "podA " + tree.share(a, result.weights()));
        assertTrue(tree.share(c, result.weights()) >= 0.4, "podC " + tree.share(c, result.weights()));
        // the rest still gets the unpromised 30 % as the default weights would share it
        double rest = 1 - tree.share(a, result.weights()) - tree.share(c, result.weights());
        assertEquals(0.3 * (1 - 0.125 - 0.125), rest, 2e-2);
    }

    @Test
    void aWeightWithoutAFloorSetsThePodsLineOnly() {
        Tree tree = kubeletNode();
        Path pod = BURSTABLE.resolve("podA");
        ShareCalculator.Result result = ShareCalculator.weights(ROOT, DISK,
                List.of(new ShareCalculator.Claim(pod, w(800), 0)), tree);
        assertEquals(Map.of(pod, w(800)), result.weights());
    }

    @Test
    void aWeightedNeighbourCountsWithItsWeight() {
        Tree tree = kubeletNode();
        Path a = BURSTABLE.resolve("podA");
        Path b = BURSTABLE.resolve("podB");
        ShareCalculator.Result result = ShareCalculator.weights(ROOT, DISK,
                List.of(new ShareCalculator.Claim(a, w(100), 0.5), new ShareCalculator.Claim(b, w(800), 0)), tree);
        assertEquals(w(800), result.weights().get(b));
        assertTrue(tree.share(a, result.weights()) >= 0.5, "podA " + tree.share(a, result.weights()));
    }

    @Test
    void aFloorAmongTooManyNeighboursIsClampedAndSaysSo() {
        Tree tree = kubeletNode();
        for (int i = 0; i < 400; i++) {
            tree.add(BURSTABLE.resolve("pod" + i));
        }
        Path pod = BURSTABLE.resolve("podA");
        ShareCalculator.Result result = ShareCalculator.weights(ROOT, DISK,
                List.of(new ShareCalculator.Claim(pod, w(100), 0.9)), tree);
        assertEquals(w(10000), result.weights().get(pod));
        assertEquals(List.of(pod), result.clamped());
    }

    @Test
    void noClaimsWriteNothing() {
        assertEquals(Map.of(), ShareCalculator.weights(ROOT, DISK, List.of(), kubeletNode()).weights());
    }
}
