package io.lvmqos.server;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/** The validated command line. */
public record DriverSettings(Path socket, String nodeId, String driverName, List<String> volumeGroups,
                             Path kubeletDir, Path cgroupRoot, boolean watchKubernetes, String version,
                             Optional<InetSocketAddress> metricsAddress, OptionalLong wipeBytesPerSecond,
                             Duration probeLvmTimeout, IoCostSettings ioCost,
                             Optional<Path> lvmShellDir) {

    public DriverSettings {
        volumeGroups = List.copyOf(volumeGroups);
    }
}
