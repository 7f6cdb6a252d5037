package io.lvmqos.device;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;

/**
 * Gate for tests that need root on the host kernel: without root they fail, loudly, unless
 * LVMQOS_SKIP_ROOT_TESTS=1 says to skip them (then they show as skipped, never as passed).
 */
public final class RootRequired {

    public static final String SKIP_VARIABLE = "LVMQOS_SKIP_ROOT_TESTS";

    private RootRequired() {
    }

    public static void check() {
        int uid;
        try {
            uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        } catch (IOException e) {
            throw new IllegalStateException("cannot tell whether the tests run as root", e);
        }
        if (uid == 0) {
            return;
        }
        if ("1".equals(System.getenv(SKIP_VARIABLE))) {
            Assumptions.abort("needs root; skipped because " + SKIP_VARIABLE + "=1");
        }
        fail("this test needs root on the host kernel (uid is " + uid + "); run as root, or set "
                + SKIP_VARIABLE + "=1 to skip it explicitly");
    }
}
