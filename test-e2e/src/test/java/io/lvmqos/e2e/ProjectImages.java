package io.lvmqos.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The images the container runtime checks import: scripts/build-image makes them once per checkout
 * (cached under target/image, so a second call only checks), from the jar this build made.
 */
public final class ProjectImages {

    private ProjectImages() {
    }

    /** The checkout's top directory, from the driver jar's path (csi-node/target/lvmqos.jar). */
    public static Path repository() {
        return Path.of(System.getProperty("lvmqos.jar")).toAbsolutePath().normalize().getParent().getParent().getParent();
    }

    /** Runs scripts/build-image; returns target/image, where the OCI archives are. */
    public static Path build() throws IOException, InterruptedException {
        Path repository = repository();
        Process build = new ProcessBuilder(repository.resolve("scripts/build-image").toString())
                .directory(repository.toFile()).inheritIO().start();
        if (!build.waitFor(10, TimeUnit.MINUTES)) {
            build.destroyForcibly();
            throw new AssertionError("scripts/build-image did not finish within 10 minutes");
        }
        if (build.exitValue() != 0) {
            throw new AssertionError("scripts/build-image failed with exit code " + build.exitValue());
        }
        Path images = repository.resolve("target/image");
        if (!Files.isRegularFile(images.resolve("lvmqos.oci.tar"))) {
            throw new AssertionError("scripts/build-image made no target/image/lvmqos.oci.tar");
        }
        return images;
    }
}
