package io.lvmqos.guarantee;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.volume.IoCostWeight;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Turns the weights and floors of the pods on one disk into io.cost weights along their cgroup
 * paths. Pure: it reads the tree through {@link Tree} and answers what to write.
 *
 * <p>io.cost gives an active cgroup the share {@code w / (sum of its active siblings' w)} of what
 * its parent gets, level by level from the root, so a pod's share of the disk is the product of
 * those ratios along its path (kubepods, the QoS slice, the pod). A weight on the pod cgroup alone
 * only orders the pod among its siblings; a floor must hold against everything else on the disk,
 * other QoS classes and system.slice included, so it needs weights on the ancestors too.
 *
 * <p>The rule: with floors summing to a share {@code N} of the disk, every cgroup {@code X} on the
 * path of a floored pod is given the target share {@code t(X) = n(X) + (1 - N) * b(X)}, where
 * {@code n(X)} is the floors below it and {@code b(X)} the share it would have with nobody's weights
 * changed. What is not promised ({@code 1 - N}) is shared as the weights already on the node
 * share it, and the floors come on top. Targets add up at every level, so the weights that give
 * them follow from the siblings' own weights, which are never touched: cgroups off those paths
 * (other pods, system.slice) keep exactly what they had. The shares assume every sibling busy;
 * io.cost hands the share of an idle one to the busy, so a floor only grows when the disk is
 * quieter. Weights are clamped to the kernel's 1..10000, which can leave a large floor among many
 * neighbours short: {@link Result#clamped()} says where.
 */
public final class ShareCalculator {

    /** The floors' sum is counted as at most this share, so that what is not promised keeps a finite weight. */
    static final double MAX_PROMISED = 0.95;

    private ShareCalculator() {
    }

    /** The cgroup tree as the calculation needs it. */
    public interface Tree {
        /** The cgroups directly below this one. */
        List<Path> children(Path cgroup);

        /** The cgroup's default weight (its io.weight "default" line). */
        IoCostWeight defaultWeight(Path cgroup);

        /** The weight the cgroup has on the disk now: its own line for the disk, else its default. */
        IoCostWeight weightOn(Path cgroup, DeviceNumber disk);
    }

    /**
     * One pod on the disk.
     *
     * @param baseWeight the pod's weight before floors: the largest {@code ioWeight} of its volumes on
     *     the disk, else its cgroup's default
     * @param share the disk share its volumes' floors promise, 0 for none
     */
    public record Claim(Path cgroup, IoCostWeight baseWeight, double share) {
    }

    /**
     * @param weights each cgroup's weight on the disk: the pods' own and the floored pods' ancestors'
     * @param clamped the cgroups whose weight the kernel's range cut short of the floor's
     */
    public record Result(Map<Path, IoCostWeight> weights, List<Path> clamped) {
    }

    public static Result weights(Path root, DeviceNumber disk, Collection<Claim> claims, Tree tree) {
        Map<Path, IoCostWeight> weights = new LinkedHashMap<>();
        List<Path> clamped = new ArrayList<>();
        Map<Path, Claim> byCgroup = new HashMap<>();
        double promised = 0;
        for (Claim claim : claims) {
            byCgroup.put(claim.cgroup(), claim);
            weights.put(claim.cgroup(), claim.baseWeight());
            promised += claim.share();
        }
        if (promised <= 0) {
            return new Result(weights, clamped);
        }
        double unpromised = 1 - Math.min(promised, MAX_PROMISED);
        Map<Path, Double> need = new HashMap<>();
        Set<Path> onPath = new LinkedHashSet<>();
        for (Claim claim : claims) {
            if (claim.share() <= 0) {
                continue;
            }
            for (Path at = claim.cgroup(); at != null && at.startsWith(root) && !at.equals(root); at = at.getParent()) {
                onPath.add(at);
                need.merge(at, claim.share(), Double::sum);
            }
        }
        record Level(Path cgroup, double base, double target) {
        }
        Deque<Level> pending = new ArrayDeque<>(List.of(new Level(root, 1.0, 1.0)));
        while (!pending.isEmpty()) {
            Level parent = pending.removeFirst();
            List<Path> children = new ArrayList<>(tree.children(parent.cgroup()));
            onPath.stream().filter(p -> parent.cgroup().equals(p.getParent()) && !children.contains(p)).forEach(children::add);
            double siblingsBase = 0;
            boolean othersThere = false;
            for (Path child : children) {
                siblingsBase += baseWeight(child, disk, byCgroup, onPath, tree);
                othersThere |= !onPath.contains(child);
            }
            for (Path child : children) {
                if (!onPath.contains(child)) {
                    continue;
                }
                double base = parent.base() * baseWeight(child, disk, byCgroup, onPath, tree) / siblingsBase;
                double target = need.get(child) + unpromised * base;
                // with others beside it, its weight against theirs gives the target; alone among
                // floored siblings, the targets' ratios do
                double exact = othersThere ? target * siblingsBase / (unpromised * parent.base())
                        : target / parent.target() * siblingsBase;
                long rounded = Math.round(exact);
                if (rounded > IoCostWeight.MAX) {
                    clamped.add(child);
                }
                weights.put(child, IoCostWeight.nearest(rounded));
                if (!byCgroup.containsKey(child)) {
                    pending.addLast(new Level(child, base, target));
                }
            }
        }
        return new Result(weights, clamped);
    }

    /** A cgroup's weight with no floor counted: a pod's own base, an ancestor's default, anyone else's as it is. */
    private static double baseWeight(Path cgroup, DeviceNumber disk, Map<Path, Claim> claims, Set<Path> onPath, Tree tree) {
        Claim claim = claims.get(cgroup);
        if (claim != null) {
            return claim.baseWeight().value();
        }
        return (onPath.contains(cgroup) ? tree.defaultWeight(cgroup) : tree.weightOn(cgroup, disk)).value();
    }
}
