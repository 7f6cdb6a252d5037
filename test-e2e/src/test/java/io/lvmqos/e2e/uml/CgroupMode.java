package io.lvmqos.e2e.uml;

import java.util.Arrays;

/** Which cgroup hierarchy the guest's init mounts before the payload runs. */
public enum CgroupMode {
    /** cgroup2 at the root path, with {@code +io +memory} in the root's {@code cgroup.subtree_control}. */
    V2("v2"),
    /** A tmpfs at the root path holding the v1 {@code blkio} hierarchy at {@code <root>/blkio}. */
    V1("v1"),
    /** No cgroup file system mounted. */
    NONE("none");

    private final String guestName;

    CgroupMode(String guestName) {
        this.guestName = guestName;
    }

    /** The value of {@code LVMQOS_CGROUP_MODE} in the guest. */
    public String guestName() {
        return guestName;
    }

    static CgroupMode ofGuestName(String name) {
        return Arrays.stream(values())
                .filter(mode -> mode.guestName.equals(name))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("unknown cgroup mode: " + name));
    }
}
