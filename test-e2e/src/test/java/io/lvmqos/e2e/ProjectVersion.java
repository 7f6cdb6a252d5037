package io.lvmqos.e2e;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * The Maven project's version as the driver itself reports it: read from the driver's own
 * lvmqos-build.properties (csi-node's resources, filtered by Maven), on this class path as on the
 * driver's. Images made by scripts/build-image carry it as their tag.
 */
public final class ProjectVersion {

    static final String RESOURCE = "/lvmqos-build.properties";

    private ProjectVersion() {
    }

    public static String get() {
        try (InputStream in = ProjectVersion.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is not on the class path: build csi-node first");
            }
            Properties properties = new Properties();
            properties.load(in);
            String version = properties.getProperty("version", "");
            if (version.isEmpty() || version.contains("${")) {
                throw new IllegalStateException(RESOURCE + " holds no version, Maven did not filter it: " + properties);
            }
            return version;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
