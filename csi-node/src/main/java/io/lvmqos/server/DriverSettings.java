package io.lvmqos.server;

import java.nio.file.Path;
import java.util.List;

/** The validated command line. */
public record DriverSettings(Path socket, String nodeId, String driverName, List<String> volumeGroups,
                             Path kubeletDir, Path cgroupRoot, boolean watchKubernetes, String version) {

    public DriverSettings {
        volumeGroups = List.copyOf(volumeGroups);
    }
}
