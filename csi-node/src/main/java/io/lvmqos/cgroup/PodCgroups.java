package io.lvmqos.cgroup;

import io.lvmqos.errors.DriverException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Finds a pod's cgroup from its UID, for both kubelet cgroup drivers, all three QoS classes and
 * any kubelet {@code --cgroup-root}, on cgroup v1 (blkio hierarchy) and v2.
 *
 * <p>The pod tree is searched for rather than configured: kubelet names its top cgroup
 * {@code kubepods} (cgroupfs driver) or {@code kubepods.slice} (systemd), below whatever
 * {@code --cgroup-root} says; with {@code --cgroup-root=/kubelet}, as kind runs it, that is
 * {@code kubelet/kubepods} or {@code kubelet.slice/kubelet-kubepods.slice}. The kubepods
 * directories found are cached, a cache a restart may lose: a pod missing from every cached tree
 * searches again, so a tree made later is still found. Within a tree the pod's cgroup is found by
 * its exact name ({@code pod<uid>} or {@code <tree>-[<qos>-]pod<uid_>.slice}), so another pod's
 * cgroup can never match.
 *
 * <p>With {@code --cgroups-per-qos=false} kubelet makes no kubepods tree and no pod cgroups at
 * all (its pod container manager is a no-op that names the cgroup root for every pod, and each
 * container's cgroup goes straight below that root, beside every other pod's). No cgroup then
 * holds one pod's containers and nothing else, so such a node cannot have per-pod limits:
 * {@link #require} says so with FAILED_PRECONDITION instead of letting kubelet retry for ever.
 */
public final class PodCgroups {

    /** How deep below the hierarchy a kubepods tree may start: {@code a/b/kubelet/kubepods} is 4. */
    static final int MAX_ROOT_DEPTH = 4;

    private static final Pattern SYSTEMD_TREE = Pattern.compile("([a-z0-9_.-]+-)?kubepods\\.slice");
    private static final String CGROUPFS_TREE = "kubepods";

    /** The result of a lookup: the pod's cgroup if found, and every directory that was tried. */
    public record Lookup(Optional<Path> cgroup, List<Path> tried, List<Path> podTrees) {
        public Lookup {
            tried = List.copyOf(tried);
            podTrees = List.copyOf(podTrees);
        }
    }

    private final Path root;
    private volatile List<Path> podTrees = List.of();

    /** @param cgroupRoot the host's cgroup mount point, usually /sys/fs/cgroup */
    public PodCgroups(Path cgroupRoot) {
        this.root = cgroupRoot;
    }

    public Path root() {
        return root;
    }

    public CgroupMode mode() {
        return CgroupMode.detect(root);
    }

    public Lookup find(String podUid) {
        PodUids.require(podUid);
        List<Path> cached = podTrees;
        Optional<Lookup> hit = lookIn(cached, podUid);
        if (hit.isPresent()) {
            return hit.get();
        }
        List<Path> trees = searchPodTrees(mode().hierarchy(root));
        podTrees = trees;
        return lookIn(trees, podUid).orElseGet(() -> new Lookup(Optional.empty(), triedIn(trees, podUid), trees));
    }

    private static Optional<Lookup> lookIn(List<Path> trees, String podUid) {
        List<Path> tried = triedIn(trees, podUid);
        return tried.stream().filter(Files::isDirectory).findFirst()
                .map(found -> new Lookup(Optional.of(found), tried, trees));
    }

    private static List<Path> triedIn(List<Path> trees, String podUid) {
        List<Path> tried = new ArrayList<>();
        for (Path tree : trees) {
            tried.addAll(candidates(tree, podUid));
        }
        return tried;
    }

    /**
     * The pod's cgroup directory.
     *
     * @throws DriverException.Unavailable when a kubepods tree exists but the pod's cgroup is not
     *     in it yet: kubelet's volume manager can publish before its pod worker has made the pod's
     *     cgroup, and retries
     * @throws DriverException.FailedPrecondition when there is no kubepods tree at all
     */
    public Path require(String podUid) {
        Lookup lookup = find(podUid);
        if (lookup.cgroup().isPresent()) {
            return lookup.cgroup().get();
        }
        Path hierarchy = mode().hierarchy(root);
        if (lookup.podTrees().isEmpty()) {
            throw DriverException.failedPrecondition("no cgroup for pod " + podUid + ": there is no kubelet pod tree"
                    + " (a directory named kubepods, kubepods.slice or <name>-kubepods.slice) within "
                    + MAX_ROOT_DEPTH + " levels of " + hierarchy + ". Kubelet makes none when it runs with"
                    + " --cgroups-per-qos=false; its pods then share one cgroup parent and cannot be limited one by one");
        }
        throw DriverException.unavailable("no cgroup for pod " + podUid + " yet: searched " + lookup.tried()
                + " (the pod trees found below " + hierarchy + "); kubelet may not have made the pod's cgroup yet");
    }

    /** Where kubelet puts a pod's cgroup in one pod tree, by the tree's driver. */
    static List<Path> candidates(Path tree, String podUid) {
        PodUids.require(podUid);
        String name = tree.getFileName().toString();
        if (name.equals(CGROUPFS_TREE)) {
            return List.of(tree.resolve("burstable").resolve("pod" + podUid),
                    tree.resolve("besteffort").resolve("pod" + podUid),
                    tree.resolve("pod" + podUid));
        }
        String prefix = name.substring(0, name.length() - ".slice".length());
        String escaped = podUid.replace('-', '_');
        return List.of(
                tree.resolve(prefix + "-burstable.slice").resolve(prefix + "-burstable-pod" + escaped + ".slice"),
                tree.resolve(prefix + "-besteffort.slice").resolve(prefix + "-besteffort-pod" + escaped + ".slice"),
                tree.resolve(prefix + "-pod" + escaped + ".slice"));
    }

    /**
     * Every kubepods tree within {@link #MAX_ROOT_DEPTH} levels of the hierarchy, nearest first;
     * the search does not descend into a tree it found (pods and containers are below it).
     */
    static List<Path> searchPodTrees(Path hierarchy) {
        List<Path> found = new ArrayList<>();
        List<Path> level = List.of(hierarchy);
        for (int depth = 1; depth <= MAX_ROOT_DEPTH && !level.isEmpty(); depth++) {
            List<Path> next = new ArrayList<>();
            for (Path dir : level) {
                for (Path child : subdirectories(dir)) {
                    if (isPodTree(child.getFileName().toString())) {
                        found.add(child);
                    } else {
                        next.add(child);
                    }
                }
            }
            level = next;
        }
        return found;
    }

    static boolean isPodTree(String name) {
        return name.equals(CGROUPFS_TREE) || SYSTEMD_TREE.matcher(name).matches();
    }

    private static List<Path> subdirectories(Path dir) {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.filter(Files::isDirectory).sorted().toList();
        } catch (NoSuchFileException gone) {
            return List.of(); // removed while we looked: a cgroup that ended
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + dir + ": " + e.getMessage(), e);
        }
    }
}
