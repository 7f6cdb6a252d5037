package io.lvmqos.group;

import io.lvmqos.volume.LvmNames;
import java.util.Optional;

/**
 * The id of a volume group snapshot: {@code lvmqos-group/<node>/<vg>/<token>}. The token is the
 * value of the {@code lvmqos.group} tag that every member snapshot LV carries, derived from the
 * group's CSI name; the group exists exactly as long as LVs with that tag do.
 */
record GroupSnapshotId(String node, String volumeGroup, String token) {

    static final String PREFIX = "lvmqos-group";

    GroupSnapshotId {
        if (!LvmNames.isValidName(volumeGroup) || !LvmNames.isValidName(token) || !token.startsWith("grp_")
                || node.isEmpty() || node.contains("/")) {
            throw new IllegalArgumentException("not a group snapshot id: " + node + "/" + volumeGroup + "/" + token);
        }
    }

    static GroupSnapshotId of(String node, String volumeGroup, String csiName) {
        return new GroupSnapshotId(node, volumeGroup, LvmNames.groupToken(csiName));
    }

    static Optional<GroupSnapshotId> parse(String text) {
        String[] parts = text.split("/", -1);
        if (parts.length != 4 || !parts[0].equals(PREFIX)) {
            return Optional.empty();
        }
        try {
            return Optional.of(new GroupSnapshotId(parts[1], parts[2], parts[3]));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    boolean isOn(String nodeName) {
        return node.equals(nodeName);
    }

    @Override
    public String toString() {
        return PREFIX + "/" + node + "/" + volumeGroup + "/" + token;
    }
}
