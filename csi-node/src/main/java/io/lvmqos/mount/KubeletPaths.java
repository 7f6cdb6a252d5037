package io.lvmqos.mount;

import io.lvmqos.errors.DriverException;
import io.lvmqos.errors.Echo;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Paths the kubelet hands the node plugin (staging and target paths), checked before the driver
 * creates, mounts on or removes anything there.
 *
 * <p>The rule: a path must be absolute, already normalized (no "." or ".."), under the kubelet
 * directory, and no existing component below that directory may be a symlink. Kubelet never puts
 * symlinks on these paths, so one there is either a mistake or an attempt to make a root process
 * mount on, or delete, something outside the kubelet directory; both are refused. The kubelet
 * directory itself may be a symlink (e.g. /var/lib/kubelet to a data disk): it is resolved once,
 * here, and paths are accepted under either spelling and returned under the real one, which is the
 * spelling the mount table uses.
 *
 * <p>Staging and target paths must also have the shape kubelet gives them (its pkg/volume/csi),
 * so that a confused or hostile caller cannot have the driver mount over, unmount or remove
 * kubelet's own files (pki/, plugins_registry/, a pod's other volumes):
 * <ul>
 * <li>staging: {@code plugins/kubernetes.io/csi/<driver>/<hash of the volume handle>/globalmount},
 *     the older {@code plugins/kubernetes.io/csi/pv/<pv>/globalmount}, or, for block volumes,
 *     {@code plugins/kubernetes.io/csi/volumeDevices/staging/<pv>};</li>
 * <li>target: {@code pods/<pod uid>/volumes/kubernetes.io~csi/<pv>/<leaf>} (kubelet's leaf is
 *     {@code mount}; any one name is taken, since conformance tools such as csi-sanity choose their
 *     own), or, for block volumes, {@code plugins/kubernetes.io/csi/volumeDevices/publish/<pv>/<pod uid>}.</li>
 * </ul>
 *
 * <p>The check reads names; a component can be swapped for a symlink right after it. So nothing
 * is done by name: creation, removal, mounts and unmounts go through {@link Beneath}, which walks
 * the path again one component at a time from a descriptor of the kubelet directory and refuses
 * a symlink wherever it meets one, and {@link Mounter} checks after a mount that the path still
 * leads to it.
 */
public final class KubeletPaths {

    private static final List<String> CSI_PLUGIN_DIR = List.of("plugins", "kubernetes.io", "csi");
    /** Linux's limits on a file name and on a whole path with its NUL (limits.h). */
    private static final int NAME_MAX = 255;
    private static final int PATH_MAX = 4096;

    private final Path root;
    private final Path realRoot;
    private final Optional<String> driverName;
    private final Beneath beneath;
    private final KubeletPropagation propagation;

    /** Paths of any CSI driver's layout: for tools that handle paths, not volumes of one driver. */
    public KubeletPaths(Path kubeletDir) {
        this(kubeletDir, Optional.empty(), Optional.empty());
    }

    /** Paths of {@code driverName}'s volumes, as kubelet lays them out. */
    public KubeletPaths(Path kubeletDir, String driverName) {
        this(kubeletDir, Optional.of(driverName), Optional.empty());
    }

    /** As the node plugin uses them: also whether its mounts there reach the host, from this mount table. */
    public KubeletPaths(Path kubeletDir, String driverName, MountTable mountTable) {
        this(kubeletDir, Optional.of(driverName), Optional.of(mountTable));
    }

    private KubeletPaths(Path kubeletDir, Optional<String> driverName, Optional<MountTable> mountTable) {
        this.driverName = driverName;
        if (!kubeletDir.isAbsolute()) {
            throw DriverException.invalidArgument("kubelet directory " + kubeletDir + " must be absolute");
        }
        this.root = kubeletDir.normalize();
        try {
            this.realRoot = root.toRealPath();
        } catch (IOException e) {
            throw DriverException.failedPrecondition("kubelet directory " + kubeletDir + " is not usable: " + e);
        }
        this.beneath = new Beneath(NativeLibC.libc(), NativeLibC.lastError(), realRoot);
        this.propagation = mountTable.map(table -> KubeletPropagation.of(table.read(), realRoot))
                .orElseGet(KubeletPropagation::unchecked);
    }

    public Path root() {
        return realRoot;
    }

    /** Whether mounts made here reach the host (checked once, when the plugin's paths were made). */
    public KubeletPropagation propagation() {
        return propagation;
    }

    /**
     * Checks {@code requested} and returns it under the real kubelet directory. Components that do
     * not exist yet are fine; existing ones must not be symlinks.
     *
     * @throws DriverException.InvalidArgument for a path outside the kubelet directory or not normalized
     * @throws DriverException.InvalidArgument for a symlink on the path, as for a path outside the directory
     * @throws DriverException.InvalidArgument for a path no file system holds, or one that goes on below a file
     */
    public Path check(Path requested) {
        if (!requested.isAbsolute() || !requested.normalize().equals(requested)) {
            throw DriverException.invalidArgument("path " + Echo.of(requested.toString()) + " must be absolute and contain no . or ..");
        }
        Path relative;
        if (requested.startsWith(realRoot)) {
            relative = realRoot.relativize(requested);
        } else if (requested.startsWith(root)) {
            relative = root.relativize(requested);
        } else {
            throw DriverException.invalidArgument("path " + Echo.of(requested.toString()) + " is outside the kubelet directory " + root);
        }
        if (relative.toString().isEmpty()) {
            throw DriverException.invalidArgument("path " + Echo.of(requested.toString()) + " is the kubelet directory itself");
        }
        requireFitsTheFileSystem(requested, realRoot.resolve(relative));
        Path current = realRoot;
        Path toLookAt = relative;
        int left = relative.getNameCount();
        // one openat2 answers for the directories above the last name where they are there: only
        // the names after them are then looked at (a publish checks two paths of six or seven
        // names, and its target's <pv> directory may be missing yet)
        int atOnce = left > 1 ? beneath.directoriesAtOnce(realRoot.resolve(relative).getParent()) : 0;
        if (atOnce > 0) {
            current = realRoot.resolve(relative.subpath(0, atOnce));
            toLookAt = relative.subpath(atOnce, left);
            left -= atOnce;
        }
        for (Path name : toLookAt) {
            current = current.resolve(name);
            left--;
            BasicFileAttributes attributes;
            try {
                attributes = Files.readAttributes(current, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            } catch (NoSuchFileException e) {
                break;
            } catch (IOException e) {
                throw DriverException.internal("cannot inspect " + current + ": " + e, e);
            }
            if (attributes.isSymbolicLink()) {
                throw DriverException.invalidArgument("path " + Echo.of(requested.toString()) + " goes through the symlink " + current
                        + "; the driver does not follow symlinks under the kubelet directory");
            }
            if (left > 0 && !attributes.isDirectory()) {
                throw DriverException.invalidArgument("path " + Echo.of(requested.toString()) + " goes on below " + current
                        + ", which is not a directory");
            }
        }
        return realRoot.resolve(relative);
    }

    /**
     * Refuses a path no file system here can hold (a name over NAME_MAX bytes, the whole over
     * PATH_MAX) as the client's mistake: the kernel would answer ENAMETOOLONG, once an INTERNAL
     * error (found by KubeletPathsFuzzTest).
     */
    private static void requireFitsTheFileSystem(Path requested, Path real) {
        if (real.toString().getBytes(StandardCharsets.UTF_8).length >= PATH_MAX) {
            throw DriverException.invalidArgument("path " + Echo.of(requested.toString()) + " is longer than the "
                    + PATH_MAX + " bytes a path may have");
        }
        for (Path name : real) {
            if (name.toString().getBytes(StandardCharsets.UTF_8).length > NAME_MAX) {
                throw DriverException.invalidArgument("path " + Echo.of(requested.toString()) + " has a name longer than the "
                        + NAME_MAX + " bytes a file name may have");
            }
        }
    }

    /** {@link #check}, and the path must be one of kubelet's staging paths. */
    public Path checkStaging(Path requested) {
        Path checked = check(requested);
        if (!isStaging(realRoot.relativize(checked))) {
            throw DriverException.invalidArgument("staging path " + Echo.of(requested.toString()) + " is not where kubelet stages volumes: "
                    + realRoot + "/plugins/kubernetes.io/csi/" + driverName.orElse("<driver>")
                    + "/<hash>/globalmount, .../csi/pv/<pv>/globalmount or .../csi/volumeDevices/staging/<pv>");
        }
        return checked;
    }

    /** {@link #check}, and the path must be one of kubelet's publish targets. */
    public Path checkTarget(Path requested) {
        Path checked = check(requested);
        if (!isTarget(realRoot.relativize(checked))) {
            throw DriverException.invalidArgument("target path " + Echo.of(requested.toString()) + " is not where kubelet publishes volumes: "
                    + realRoot + "/pods/<pod uid>/volumes/kubernetes.io~csi/<pv>/mount or "
                    + realRoot + "/plugins/kubernetes.io/csi/volumeDevices/publish/<pv>/<pod uid>");
        }
        return checked;
    }

    /**
     * A volume path of NodeGetVolumeStats or NodeExpandVolume: a staging or target path, checked;
     * empty for any other path, where by construction no volume of this driver can be.
     */
    public Optional<Path> volumePath(Path requested) {
        try {
            Path checked = check(requested);
            Path relative = realRoot.relativize(checked);
            return isStaging(relative) || isTarget(relative) ? Optional.of(checked) : Optional.empty();
        } catch (DriverException.InvalidArgument notHere) {
            return Optional.empty();
        }
    }

    private boolean isStaging(Path relative) {
        List<String> names = names(relative);
        if (names.size() != 6 || !names.subList(0, 3).equals(CSI_PLUGIN_DIR)) {
            return false;
        }
        String kind = names.get(3);
        if (kind.equals("volumeDevices")) {
            return names.get(4).equals("staging");
        }
        boolean ours = kind.equals("pv") || driverName.map(kind::equals).orElse(true);
        return ours && names.get(5).equals("globalmount");
    }

    private static boolean isTarget(Path relative) {
        List<String> names = names(relative);
        if (names.size() == 6 && names.get(0).equals("pods")) {
            return names.get(2).equals("volumes") && names.get(3).equals("kubernetes.io~csi");
        }
        return names.size() == 7 && names.subList(0, 3).equals(CSI_PLUGIN_DIR)
                && names.get(3).equals("volumeDevices") && names.get(4).equals("publish");
    }

    private static List<String> names(Path relative) {
        List<String> names = new ArrayList<>();
        relative.forEach(name -> names.add(name.toString()));
        return names;
    }

    /**
     * Creates the directory and any missing parents (mode 0750), one level at a time with
     * mkdirat(2) relative to the directory above, so that nothing is created through a symlink,
     * even one swapped in after the check; an existing directory is fine.
     */
    public Path createDirectory(Path requested) {
        Path checked = check(requested);
        beneath.createDirectories(checked);
        return checked;
    }

    /**
     * Creates an empty regular file (the target of a raw block publish, bind-mounted over by the
     * device); an existing regular file is fine. Its parent must exist.
     */
    public Path createFile(Path requested) {
        Path checked = check(requested);
        beneath.createFile(checked);
        return checked;
    }

    /**
     * Removes an empty directory or a file with unlinkat(2) relative to its parent's descriptor;
     * a symlink on the path is refused like everywhere else, never followed. Returns false when
     * nothing was there. A mount point cannot be removed (EBUSY), so unmount first.
     */
    public boolean remove(Path requested) {
        return beneath.remove(check(requested));
    }

    /**
     * The publish targets kubelet's layout gives one pod, as they exist now: each
     * {@code pods/<uid>/volumes/kubernetes.io~csi/<pv>/<leaf>} (one walk, then one listing per
     * volume of the pod, through descriptors) and each {@code plugins/kubernetes.io/csi/volumeDevices/publish/<pv>/<uid>}
     * (one listing, then one name looked up per raw block volume on the node). Whether something
     * is mounted at one, and what, is for {@link Mounter#pin} to say.
     */
    public List<Path> podTargets(String podUid) {
        if (podUid.indexOf('/') >= 0 || Beneath.components(Path.of(podUid)).size() != 1) {
            throw DriverException.invalidArgument("pod UID " + Echo.of(podUid) + " is not one plain name");
        }
        Path volumes = realRoot.resolve("pods").resolve(podUid).resolve("volumes").resolve("kubernetes.io~csi");
        List<Path> targets = new ArrayList<>(beneath.listTwoLevels(volumes));
        Path publish = realRoot.resolve("plugins/kubernetes.io/csi/volumeDevices/publish");
        for (String pv : beneath.list(publish)) {
            Path target = publish.resolve(pv).resolve(podUid);
            // by name only to skip the volumes of other pods: a target found is pinned through descriptors
            if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
                targets.add(target);
            }
        }
        return targets;
    }

    /** Whether {@code path} (checked, under the real kubelet directory) is a publish target of kubelet's layout. */
    public boolean isTargetPath(Path path) {
        return path.isAbsolute() && path.normalize().equals(path) && path.startsWith(realRoot)
                && !path.equals(realRoot) && isTarget(realRoot.relativize(path));
    }

    /** The kubelet directory as descriptors: for mounting and unmounting through them ({@link Mounter}). */
    Beneath beneath() {
        return beneath;
    }

    /** Whether {@code path} (checked, under the real kubelet directory) is a staging path of this driver's layout. */
    public boolean isStagingPath(Path path) {
        return path.isAbsolute() && path.normalize().equals(path) && path.startsWith(realRoot)
                && !path.equals(realRoot) && isStaging(realRoot.relativize(path));
    }
}
