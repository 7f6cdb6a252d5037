package io.lvmqos.cgroup;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * io.cost's two files in the root cgroup (cgroup v2): {@code io.cost.qos}, which turns the
 * controller on for a disk and bounds its vrate, and {@code io.cost.model}, the disk's cost model.
 * Each holds one line per disk the controller knows, {@code MAJ:MIN key=value ...}. These govern
 * the whole disk and every workload on it, so the driver writes only the disks it is told to.
 */
public final class IoCost {

    static final String QOS_FILE = "io.cost.qos";
    static final String MODEL_FILE = "io.cost.model";

    private final Path root;

    /** @param cgroupRoot the host's cgroup v2 mount point */
    public IoCost(Path cgroupRoot) {
        this.root = cgroupRoot;
    }

    /** Whether this kernel has io.cost at all (CONFIG_BLK_CGROUP_IOCOST), on a v2 root. */
    public boolean available() {
        return Files.isRegularFile(root.resolve(QOS_FILE));
    }

    /** Whether io.cost is on for the disk: its qos line says enable=1. */
    public boolean enabledOn(DeviceNumber disk) {
        return qos(disk).map(line -> "1".equals(line.get("enable"))).orElse(false);
    }

    /** The disk's io.cost.qos settings; empty when the file has no line for it. */
    public Optional<Map<String, String>> qos(DeviceNumber disk) {
        return line(QOS_FILE, disk);
    }

    /** The disk's io.cost.model settings; empty when the file has no line for it. */
    public Optional<Map<String, String>> model(DeviceNumber disk) {
        return line(MODEL_FILE, disk);
    }

    /**
     * Sets the disk's model (when given; else the kernel's own stays) and then its QoS with
     * {@code enable=1}, and answers what the kernel shows afterwards. The kernel checks every
     * key and value: a setting it refuses is an error naming the file and the line.
     *
     * @param model settings such as {@code ctrl=user model=linear rrandiops=380 ...}
     * @param qos settings such as {@code ctrl=user rpct=95 rlat=25000 wpct=95 wlat=25000 min=100 max=100}
     */
    public Map<String, String> enable(DeviceNumber disk, Optional<String> model, String qos) {
        if (!available()) {
            throw DriverException.failedPrecondition("this kernel has no io.cost: " + root.resolve(QOS_FILE)
                    + " does not exist (CONFIG_BLK_CGROUP_IOCOST is off, or " + root + " is not a cgroup v2 root)");
        }
        model.ifPresent(settings -> CgroupFiles.write(root.resolve(MODEL_FILE), disk + " " + settings));
        CgroupFiles.write(root.resolve(QOS_FILE), disk + " enable=1 " + qos);
        Map<String, String> now = qos(disk).orElseThrow(() -> DriverException.internal(
                "io.cost took the settings for " + disk + " but " + root.resolve(QOS_FILE) + " shows no line for it"));
        if (!"1".equals(now.get("enable"))) {
            throw DriverException.internal("io.cost is still off for " + disk + " after enabling it: " + now);
        }
        return now;
    }

    /**
     * Turns io.cost off for the disk ({@code enable=0}), keeping its other QoS settings in the
     * kernel; a calibration does this so that what it measures is the disk, not the model.
     */
    public void disable(DeviceNumber disk) {
        CgroupFiles.write(root.resolve(QOS_FILE), disk + " enable=0");
    }

    /** Writes back a QoS line as {@link #qos} read it, {@code enable} included. */
    public void restoreQos(DeviceNumber disk, Map<String, String> qos) {
        StringBuilder line = new StringBuilder(disk.toString());
        qos.forEach((key, value) -> line.append(' ').append(key).append('=').append(value));
        CgroupFiles.write(root.resolve(QOS_FILE), line.toString());
    }

    private Optional<Map<String, String>> line(String file, DeviceNumber disk) {
        String text = CgroupFiles.read(root.resolve(file)).orElse("");
        for (String line : text.split("\n")) {
            String[] fields = line.strip().split("\\s+");
            if (fields.length < 1 || !fields[0].equals(disk.toString())) {
                continue;
            }
            Map<String, String> settings = new LinkedHashMap<>();
            for (int i = 1; i < fields.length; i++) {
                int eq = fields[i].indexOf('=');
                if (eq > 0) {
                    settings.put(fields[i].substring(0, eq), fields[i].substring(eq + 1));
                }
            }
            return Optional.of(settings);
        }
        return Optional.empty();
    }
}
