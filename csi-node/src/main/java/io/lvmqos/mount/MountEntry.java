package io.lvmqos.mount;

import io.lvmqos.device.DeviceNumber;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalInt;

/**
 * One line of /proc/self/mountinfo (see proc(5)), with its octal escapes decoded.
 *
 * @param root the path inside the filesystem that is mounted here ("/" unless a bind of a subtree)
 * @param options the per-mount options (ro, nosuid, relatime...)
 * @param optionalFields propagation tags: shared:N, master:N, propagate_from:N, unbindable
 * @param superOptions the per-superblock options (the filesystem's own: errors=, discard...)
 */
public record MountEntry(int mountId, int parentId, DeviceNumber device, String root, Path mountPoint,
                         List<String> options, List<String> optionalFields, String fsType, String source,
                         List<String> superOptions) {

    public MountEntry {
        options = List.copyOf(options);
        optionalFields = List.copyOf(optionalFields);
        superOptions = List.copyOf(superOptions);
    }

    public boolean readOnly() {
        return options.contains("ro");
    }

    /** The peer group this mount shares events with (mount propagation "shared"). */
    public OptionalInt sharedPeerGroup() {
        return tagged("shared:");
    }

    private OptionalInt tagged(String prefix) {
        return optionalFields.stream().filter(f -> f.startsWith(prefix))
                .mapToInt(f -> Integer.parseInt(f.substring(prefix.length()))).findFirst();
    }
}
