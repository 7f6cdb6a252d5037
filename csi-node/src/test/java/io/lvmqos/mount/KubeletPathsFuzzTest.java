package io.lvmqos.mount;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.lvmqos.errors.DriverException;
import io.lvmqos.fuzz.FuzzReport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fuzzes {@link KubeletPaths}' checks of the staging and target paths a CO sends: {@code check},
 * {@code checkStaging}, {@code checkTarget} and {@code volumePath}, on a kubelet directory reached
 * through a symlink (as /var/lib/kubelet on a data disk is), with a symlink out of it, a regular
 * file and kubelet's real layout inside.
 *
 * <p>Property: for any path, each check returns a path or refuses with DriverException.InvalidArgument
 * ({@code volumePath}: empty), never another exception. A path it returns is absolute, normalized
 * (no "." or ".." component), strictly under the real kubelet directory, names the same place as
 * the request under either spelling of that directory, and no existing component of it below the
 * kubelet directory is a symlink, so it never resolves outside the directory. What
 * {@code checkStaging} and {@code checkTarget} return has kubelet's shape for staging and publish
 * paths, and what {@code volumePath} returns has one of the two.
 */
class KubeletPathsFuzzTest {

    private static final FuzzReport REPORT = new FuzzReport(KubeletPathsFuzzTest.class);
    private static final String DRIVER = "lvmqos.csi.io";
    private static final String[] NAMES = {"pods", "uid", "volumes", "kubernetes.io~csi", "pv", "mount", "plugins",
            "kubernetes.io", "csi", DRIVER, "other.csi.io", "hash", "globalmount", "volumeDevices", "staging",
            "publish", "evil", "file", ".", "..", "", "...", "kubelet", "x".repeat(256), "a b", "\\", "é"};

    @TempDir
    Path dir;
    Path spelled;
    Path real;
    KubeletPaths paths;

    @BeforeEach
    void layOut() throws IOException {
        real = Files.createDirectories(dir.resolve("data/kubelet")).toRealPath();
        spelled = Files.createSymbolicLink(Files.createDirectories(dir.resolve("var/lib")).resolve("kubelet"), real);
        Path outside = Files.createDirectories(dir.resolve("etc"));
        Files.createDirectories(real.resolve("pods/uid/volumes/kubernetes.io~csi/pv/mount"));
        Files.createDirectories(real.resolve("plugins/kubernetes.io/csi/" + DRIVER + "/hash/globalmount"));
        Files.createDirectories(real.resolve("plugins/kubernetes.io/csi/volumeDevices/publish/pv"));
        Files.createSymbolicLink(real.resolve("pods/evil"), outside);
        Files.createSymbolicLink(real.resolve("plugins/kubernetes.io/csi/volumeDevices/publish/pv/evil"), outside);
        Files.writeString(real.resolve("pods/file"), "");
        paths = new KubeletPaths(spelled, DRIVER);
    }

    @FuzzTest
    void neverAcceptsAPathOutsideTheKubeletDirectory(FuzzedDataProvider data) {
        REPORT.count();
        String text = data.consumeBoolean() ? generated(data) : data.consumeString(300);
        Path requested;
        try {
            requested = Path.of(text);
        } catch (InvalidPathException notAPath) {
            return; // a NUL byte: NodeService's Path.of refuses it, and StatusMapper answers INVALID_ARGUMENT
        }
        switch (data.consumeInt(0, 3)) {
            case 0 -> checked(requested, () -> paths.check(requested));
            case 1 -> checked(requested, () -> paths.checkStaging(requested)).ifPresent(p -> assertTrue(isStaging(p), p::toString));
            case 2 -> checked(requested, () -> paths.checkTarget(requested)).ifPresent(p -> assertTrue(isTarget(p), p::toString));
            default -> paths.volumePath(requested).ifPresent(p -> {
                assertInside(requested, p);
                assertTrue(isStaging(p) || isTarget(p), p::toString);
            });
        }
    }

    @AfterAll
    static void report() {
        REPORT.write();
    }

    private interface Check {
        Path run();
    }

    private Optional<Path> checked(Path requested, Check check) {
        Path accepted;
        try {
            accepted = check.run();
        } catch (DriverException.InvalidArgument refused) {
            return Optional.empty();
        }
        assertInside(requested, accepted);
        return Optional.of(accepted);
    }

    private void assertInside(Path requested, Path accepted) {
        assertTrue(accepted.isAbsolute() && accepted.normalize().equals(accepted), accepted::toString);
        assertTrue(accepted.startsWith(real) && !accepted.equals(real), () -> accepted + " is not below " + real);
        Path relative = real.relativize(accepted);
        for (Path name : relative) {
            assertTrue(!name.toString().equals("..") && !name.toString().equals("."), accepted::toString);
        }
        assertTrue(requested.equals(accepted) || requested.equals(spelled.resolve(relative)),
                () -> requested + " was accepted as " + accepted);
        Path current = real;
        for (Path name : relative) {
            current = current.resolve(name);
            Path at = current;
            assertTrue(!Files.isSymbolicLink(at), () -> requested + " goes through the symlink " + at);
        }
    }

    private boolean isStaging(Path accepted) {
        List<String> names = names(accepted);
        return names.size() == 6 && names.subList(0, 3).equals(List.of("plugins", "kubernetes.io", "csi"))
                && (names.get(3).equals("volumeDevices") ? names.get(4).equals("staging")
                : (names.get(3).equals("pv") || names.get(3).equals(DRIVER)) && names.get(5).equals("globalmount"));
    }

    private boolean isTarget(Path accepted) {
        List<String> names = names(accepted);
        return names.size() == 6 && names.get(0).equals("pods") && names.get(2).equals("volumes")
                && names.get(3).equals("kubernetes.io~csi")
                || names.size() == 7 && names.subList(0, 5).equals(List.of("plugins", "kubernetes.io", "csi",
                "volumeDevices", "publish"));
    }

    private List<String> names(Path accepted) {
        List<String> names = new ArrayList<>();
        real.relativize(accepted).forEach(name -> names.add(name.toString()));
        return names;
    }

    /** The kubelet directory under either spelling (or another start), then names of its layout and worse. */
    private String generated(FuzzedDataProvider data) {
        StringBuilder path = new StringBuilder(switch (data.consumeInt(0, 5)) {
            case 0, 1 -> spelled.toString();
            case 2, 3 -> real.toString();
            case 4 -> dir.toString();
            default -> data.pickValue(new String[] {"/", "", "relative", spelled + "/..", real + "x", "//" + real});
        });
        // mostly kubelet's depths; sometimes deep enough, with long names, to pass PATH_MAX
        for (int n = data.consumeInt(0, 7) == 0 ? data.consumeInt(0, 24) : data.consumeInt(0, 8); n > 0; n--) {
            path.append(data.consumeInt(0, 9) == 0 ? "//" : "/");
            path.append(data.consumeInt(0, 5) == 0 ? data.consumeString(12) : data.pickValue(NAMES));
        }
        if (data.consumeInt(0, 9) == 0) {
            path.append('/');
        }
        return path.toString();
    }
}
