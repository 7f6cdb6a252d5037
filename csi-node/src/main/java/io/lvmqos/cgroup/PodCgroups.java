package io.lvmqos.cgroup;

import io.lvmqos.errors.DriverException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Finds a pod's cgroup from its UID, for both kubelet cgroup drivers and all three QoS classes,
 * on cgroup v1 (blkio hierarchy) and v2. The cgroup tree is the truth: the pod's QoS class is not
 * asked for, the candidates are simply tried.
 *
 * <p>Assumes kubelet's default --cgroup-root ("/"); the kubepods parent is the constructor's
 * {@code kubepods} argument for nodes that nest it deeper.
 */
public final class PodCgroups {

    /**
     * Lowercase hex and dashes: a UUID for API pods, 32 hex digits for static and mirror pods.
     * Nothing else may become part of a path.
     */
    private static final Pattern POD_UID = Pattern.compile("[0-9a-f][0-9a-f-]{0,62}[0-9a-f]");

    /** The result of a lookup: the pod's cgroup if found, and every directory that was tried. */
    public record Lookup(Optional<Path> cgroup, List<Path> tried) {
        public Lookup {
            tried = List.copyOf(tried);
        }
    }

    private final Path root;
    private final Path kubepods;

    /**
     * @param cgroupRoot the host's cgroup mount point, usually /sys/fs/cgroup
     * @param kubepods where kubelet's pod tree starts below the hierarchy, relative ("" for the top)
     */
    public PodCgroups(Path cgroupRoot, Path kubepods) {
        if (kubepods.isAbsolute() || !kubepods.normalize().equals(kubepods) || kubepods.startsWith("..")) {
            throw new IllegalArgumentException("kubepods parent must be a relative path inside the hierarchy: "
                    + kubepods);
        }
        this.root = cgroupRoot;
        this.kubepods = kubepods;
    }

    public PodCgroups(Path cgroupRoot) {
        this(cgroupRoot, Path.of(""));
    }

    public Path root() {
        return root;
    }

    public CgroupMode mode() {
        return CgroupMode.detect(root);
    }

    public Lookup find(String podUid) {
        List<Path> tried = candidates(mode().hierarchy(root).resolve(kubepods), podUid);
        return new Lookup(tried.stream().filter(Files::isDirectory).findFirst(), tried);
    }

    /**
     * The pod's cgroup directory.
     *
     * @throws DriverException.Unavailable when it is in none of the places kubelet puts it (the pod
     *     may not have started yet, so the caller may retry)
     */
    public Path require(String podUid) {
        Lookup lookup = find(podUid);
        return lookup.cgroup().orElseThrow(() -> DriverException.unavailable("no cgroup for pod " + podUid
                + " in any of " + lookup.tried() + "; has the pod sandbox been created, and does kubelet use"
                + " the default cgroup root?"));
    }

    /** Where kubelet puts a pod's cgroup: systemd driver first (the default), then cgroupfs. */
    static List<Path> candidates(Path kubepodsParent, String podUid) {
        validate(podUid);
        String escaped = podUid.replace('-', '_');
        Path slice = kubepodsParent.resolve("kubepods.slice");
        Path cgroupfs = kubepodsParent.resolve("kubepods");
        return List.of(
                slice.resolve("kubepods-burstable.slice").resolve("kubepods-burstable-pod" + escaped + ".slice"),
                slice.resolve("kubepods-besteffort.slice").resolve("kubepods-besteffort-pod" + escaped + ".slice"),
                slice.resolve("kubepods-pod" + escaped + ".slice"),
                cgroupfs.resolve("burstable").resolve("pod" + podUid),
                cgroupfs.resolve("besteffort").resolve("pod" + podUid),
                cgroupfs.resolve("pod" + podUid));
    }

    static void validate(String podUid) {
        if (podUid == null || !POD_UID.matcher(podUid).matches()) {
            throw DriverException.invalidArgument("pod UID '" + podUid
                    + "' is not valid: expected lowercase hex digits and dashes, e.g. a UUID");
        }
    }
}
