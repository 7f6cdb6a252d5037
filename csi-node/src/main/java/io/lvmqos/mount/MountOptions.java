package io.lvmqos.mount;

import io.lvmqos.errors.DriverException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * CSI mount_flags split the way mount(8) splits them: the generic ones become MS_* flags, the
 * rest is the filesystem's data string, which the filesystem itself validates when mounting.
 *
 * <p>Each option must be one token: a comma would let one "option" smuggle in others, so it is
 * rejected (this also rejects SELinux context= values with a category list). Options that change
 * what kind of mount is made (bind, move, remount, propagation) are the driver's decision and are
 * refused. mount(8)'s userspace-only options (defaults, auto, nofail, x-*...) mean nothing to the
 * kernel and are dropped, as mount(8) drops them.
 */
public record MountOptions(Set<MountFlag> flags, List<String> data) {

    public static final MountOptions NONE = new MountOptions(Set.of(), List.of());

    private static final Pattern TOKEN = Pattern.compile("[A-Za-z0-9_.:/@+=-]{1,256}");

    /** Options that set a flag, and the ones that clear it again (last one wins, as in mount(8)). */
    private static final Map<String, MountFlag> SETS = Map.ofEntries(
            Map.entry("ro", MountFlag.RDONLY), Map.entry("nosuid", MountFlag.NOSUID),
            Map.entry("nodev", MountFlag.NODEV), Map.entry("noexec", MountFlag.NOEXEC),
            Map.entry("sync", MountFlag.SYNCHRONOUS), Map.entry("dirsync", MountFlag.DIRSYNC),
            Map.entry("noatime", MountFlag.NOATIME), Map.entry("nodiratime", MountFlag.NODIRATIME),
            Map.entry("relatime", MountFlag.RELATIME), Map.entry("strictatime", MountFlag.STRICTATIME),
            Map.entry("lazytime", MountFlag.LAZYTIME), Map.entry("silent", MountFlag.SILENT),
            Map.entry("nosymfollow", MountFlag.NOSYMFOLLOW));
    private static final Map<String, MountFlag> CLEARS = Map.ofEntries(
            Map.entry("rw", MountFlag.RDONLY), Map.entry("suid", MountFlag.NOSUID),
            Map.entry("dev", MountFlag.NODEV), Map.entry("exec", MountFlag.NOEXEC),
            Map.entry("async", MountFlag.SYNCHRONOUS), Map.entry("atime", MountFlag.NOATIME),
            Map.entry("diratime", MountFlag.NODIRATIME), Map.entry("norelatime", MountFlag.RELATIME),
            Map.entry("nostrictatime", MountFlag.STRICTATIME), Map.entry("nolazytime", MountFlag.LAZYTIME),
            Map.entry("loud", MountFlag.SILENT));
    private static final Set<String> USERSPACE_ONLY = Set.of("defaults", "auto", "noauto", "nofail", "_netdev",
            "user", "nouser", "users", "owner", "group", "comment");
    private static final Set<String> REFUSED = Set.of("bind", "rbind", "move", "remount", "shared", "rshared",
            "slave", "rslave", "private", "rprivate", "unbindable", "runbindable", "mand", "nomand", "loop");

    public MountOptions {
        flags = flags.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(flags));
        data = List.copyOf(data);
    }

    public static MountOptions parse(Collection<String> csiMountFlags) {
        EnumSet<MountFlag> flags = EnumSet.noneOf(MountFlag.class);
        List<String> data = new ArrayList<>();
        for (String option : csiMountFlags) {
            if (option == null || !TOKEN.matcher(option).matches()) {
                throw DriverException.invalidArgument("mount flag '" + option + "' is not allowed: each flag must be"
                        + " a single option of letters, digits and _.:/@+=- (no commas or spaces)");
            }
            String name = option.contains("=") ? option.substring(0, option.indexOf('=')) : option;
            if (REFUSED.contains(name)) {
                throw DriverException.invalidArgument("mount flag '" + option
                        + "' is not allowed: the driver decides how volumes are mounted and propagated");
            }
            if (SETS.containsKey(option)) {
                flags.add(SETS.get(option));
            } else if (CLEARS.containsKey(option)) {
                flags.remove(CLEARS.get(option));
            } else if (USERSPACE_ONLY.contains(name) || name.startsWith("x-")) {
                continue;
            } else if (!data.contains(option)) {
                data.add(option);
            }
        }
        return new MountOptions(flags, data);
    }

    /** The data argument of mount(2), or empty when there is none. */
    public Optional<String> dataString() {
        return data.isEmpty() ? Optional.empty() : Optional.of(String.join(",", data));
    }

    public MountOptions with(MountFlag flag) {
        EnumSet<MountFlag> more = flags.isEmpty() ? EnumSet.noneOf(MountFlag.class) : EnumSet.copyOf(flags);
        more.add(flag);
        return new MountOptions(more, data);
    }

    /** Adds filesystem options the driver needs (e.g. nouuid for an xfs snapshot) if absent. */
    public MountOptions withData(String option) {
        if (data.contains(option)) {
            return this;
        }
        List<String> more = new ArrayList<>(data);
        more.add(option);
        return new MountOptions(flags, more);
    }
}
