package io.lvmqos.cgroup;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import io.lvmqos.volume.IoCostWeight;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A cgroup's io.weight as io.cost shows it: {@code default N}, then one {@code MAJ:MIN N} line per
 * device given a weight of its own. Writing {@code MAJ:MIN default} removes a device's line.
 *
 * @param defaultWeight the cgroup's weight on every device without a line of its own
 * @param perDevice the devices with a line of their own
 */
public record IoWeight(IoCostWeight defaultWeight, Map<DeviceNumber, IoCostWeight> perDevice) {

    static final String FILE = "io.weight";

    public IoWeight {
        perDevice = Map.copyOf(perDevice);
    }

    /** The weight the cgroup has on this device. */
    public IoCostWeight on(DeviceNumber device) {
        return perDevice.getOrDefault(device, defaultWeight);
    }

    static String line(DeviceNumber device, IoCostWeight weight) {
        return device + " " + weight;
    }

    static String removal(DeviceNumber device) {
        return device + " default";
    }

    /**
     * Parses the file; a missing default line means the kernel's default.
     *
     * @throws DriverException.Internal naming the line it cannot read ({@link CgroupFiles#notUnderstood})
     */
    static IoWeight parse(String text) {
        IoCostWeight dflt = IoCostWeight.DEFAULT;
        Map<DeviceNumber, IoCostWeight> devices = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            String[] fields = line.strip().split("\\s+");
            if (fields.length != 2) {
                continue;
            }
            try {
                if (fields[0].equals("default")) {
                    dflt = IoCostWeight.parse(fields[1]);
                } else {
                    devices.put(DeviceNumber.parse(fields[0]), IoCostWeight.parse(fields[1]));
                }
            } catch (IllegalArgumentException e) {
                throw CgroupFiles.notUnderstood(FILE, line, e);
            }
        }
        return new IoWeight(dflt, devices);
    }
}
