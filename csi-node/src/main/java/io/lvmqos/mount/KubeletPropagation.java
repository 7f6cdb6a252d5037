package io.lvmqos.mount;

import io.lvmqos.errors.DriverException;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Whether the mounts the driver makes under the kubelet directory reach the host, and from there the
 * pods. In a container they do only if the directories it publishes into ({@code pods/} and
 * {@code plugins/}) sit on a shared mount, which is what {@code mountPropagation: Bidirectional} gives
 * them; with HostToContainer or None the driver's bind mounts stay in its own mount namespace, and a pod
 * would start on an empty directory and write to its container's root file system instead of the volume.
 * Checked once, at start-up, from the driver's own mountinfo: the mount holding each directory must carry
 * the optional field {@code shared:N}.
 */
public final class KubeletPropagation {

    /** The directories under the kubelet directory that the DaemonSet mounts and the driver mounts into. */
    static final List<String> PUBLISHED_INTO = List.of("pods", "plugins");

    private final Optional<String> problem;

    private KubeletPropagation(Optional<String> problem) {
        this.problem = problem;
    }

    /** For tools and tests that handle paths outside a node plugin container: nothing is checked. */
    public static KubeletPropagation unchecked() {
        return new KubeletPropagation(Optional.empty());
    }

    /** The verdict for {@code kubeletDir} (a real path, as mountinfo spells it) in this mount table. */
    public static KubeletPropagation of(List<MountEntry> mounts, Path kubeletDir) {
        for (String name : PUBLISHED_INTO) {
            Path dir = kubeletDir.resolve(name);
            Optional<MountEntry> holder = holding(mounts, dir);
            if (holder.isEmpty()) {
                return new KubeletPropagation(Optional.of("no mount holds " + dir + " in /proc/self/mountinfo"));
            }
            if (holder.get().sharedPeerGroup().isEmpty()) {
                return new KubeletPropagation(Optional.of(dir + " is on the mount at " + holder.get().mountPoint()
                        + ", which is not shared (no shared:N in its mountinfo line"
                        + (holder.get().optionalFields().isEmpty() ? "" : ", only " + holder.get().optionalFields())
                        + "): the volumes this plugin mounts there would stay inside its container and pods would see"
                        + " an empty directory. Mount " + dir + " into the node plugin's container with"
                        + " mountPropagation: Bidirectional (deploy/kubernetes/daemonset.yaml)"));
            }
        }
        return new KubeletPropagation(Optional.empty());
    }

    /**
     * The mount whose file system holds {@code path}: the one with the longest mount point that is
     * {@code path} or an ancestor of it, and of several stacked there the one on top.
     */
    static Optional<MountEntry> holding(List<MountEntry> mounts, Path path) {
        Path wanted = path.toAbsolutePath().normalize();
        return mounts.stream().map(MountEntry::mountPoint).filter(wanted::startsWith)
                .max(Comparator.comparingInt(Path::getNameCount))
                .flatMap(mountPoint -> MountTable.topAt(mounts, mountPoint));
    }

    /** Why publishing cannot work here; empty when the kubelet directory propagates. */
    public Optional<String> problem() {
        return problem;
    }

    /** Refuses a publish that would land in this container only. */
    public void requireShared() {
        problem.ifPresent(why -> {
            throw DriverException.failedPrecondition(why);
        });
    }
}
