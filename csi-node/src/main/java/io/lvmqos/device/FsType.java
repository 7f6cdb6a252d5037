package io.lvmqos.device;

import io.lvmqos.errors.DriverException;
import java.util.Arrays;
import java.util.stream.Collectors;

/** The filesystems the driver formats and grows; the names are the kernel's and blkid's. */
public enum FsType {
    EXT4("ext4"),
    XFS("xfs");

    private final String kernelName;

    FsType(String kernelName) {
        this.kernelName = kernelName;
    }

    /** The name mount(2) and blkid use. */
    public String kernelName() {
        return kernelName;
    }

    /** A CSI fs_type: empty means the default, ext4. */
    public static FsType fromCsi(String fsType) {
        if (fsType == null || fsType.isEmpty()) {
            return EXT4;
        }
        for (FsType type : values()) {
            if (type.kernelName.equals(fsType)) {
                return type;
            }
        }
        throw DriverException.invalidArgument("fs_type '" + fsType + "' is not supported; supported: "
                + Arrays.stream(values()).map(FsType::kernelName).collect(Collectors.joining(", "))
                + " (empty means ext4)");
    }

    @Override
    public String toString() {
        return kernelName;
    }
}
