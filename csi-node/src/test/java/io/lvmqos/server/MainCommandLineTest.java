package io.lvmqos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** The plugin's options: their defaults, each one's effect on the settings, and each one's refusals. */
class MainCommandLineTest {

    private static String refusal(String... args) {
        return assertThrows(IllegalArgumentException.class, () -> Main.settings(args)).getMessage();
    }

    @Test
    void defaults() {
        DriverSettings settings = Main.settings("--node-id", "n1");
        assertEquals(Path.of("/csi/csi.sock"), settings.socket());
        assertEquals("n1", settings.nodeId());
        assertEquals("lvmqos.csi.io", settings.driverName());
        assertEquals(List.of("lvmqos"), settings.volumeGroups());
        assertEquals(Path.of("/var/lib/kubelet"), settings.kubeletDir());
        assertEquals(Path.of("/sys/fs/cgroup"), settings.cgroupRoot());
        assertFalse(settings.watchKubernetes());
        assertEquals(Optional.empty(), settings.metricsAddress());
        assertEquals(OptionalLong.empty(), settings.wipeBytesPerSecond());
        assertEquals(Duration.ofSeconds(30), settings.probeLvmTimeout());
        assertEquals(Optional.of(Path.of("/tmp")), settings.lvmShellDir(), "lvm runs in shells by default");
        assertEquals(Optional.empty(), Main.settings("--node-id", "n1", "--fork-lvm").lvmShellDir());
    }

    @Test
    void everyOptionInBothForms() {
        DriverSettings spaced = Main.settings("--node-id", "n1", "--endpoint", "unix:///tmp/x/csi.sock",
                "--driver-name", "d.example.org", "--volume-group", "vg1", "--volume-group", "vg2",
                "--kubelet-dir", "/k//lib/", "--cgroup-root", "/host/sys/fs/cgroup", "--watch-kubernetes",
                "--wipe-bps", "200Mi", "--metrics-address", ":9808", "--probe-lvm-timeout", "5",
                "--log-level", "debug", "--log-wire", "--lvm-shell-dir", "/run//shells/");
        DriverSettings joined = Main.settings("--node-id=n1", "--endpoint=unix:///tmp/x/csi.sock",
                "--driver-name=d.example.org", "--volume-group=vg1", "--volume-group=vg2", "--kubelet-dir=/k//lib/",
                "--cgroup-root=/host/sys/fs/cgroup", "--watch-kubernetes", "--wipe-bps=200Mi",
                "--metrics-address=:9808", "--probe-lvm-timeout=5", "--log-level=debug", "--log-wire",
                "--lvm-shell-dir=/run//shells/");
        assertEquals(spaced, joined);
        assertEquals(Path.of("/tmp/x/csi.sock"), spaced.socket());
        assertEquals("d.example.org", spaced.driverName());
        assertEquals(List.of("vg1", "vg2"), spaced.volumeGroups());
        assertEquals(Path.of("/k/lib"), spaced.kubeletDir());
        assertEquals(Path.of("/host/sys/fs/cgroup"), spaced.cgroupRoot());
        assertTrue(spaced.watchKubernetes());
        assertEquals(OptionalLong.of(200L << 20), spaced.wipeBytesPerSecond());
        assertEquals(Optional.of(new InetSocketAddress(9808)), spaced.metricsAddress());
        assertEquals(Duration.ofSeconds(5), spaced.probeLvmTimeout());
        assertEquals(Optional.of(Path.of("/run/shells")), spaced.lvmShellDir());
    }

    @Test
    void badValuesAreRefusedNamingTheOption() {
        assertTrue(refusal().contains("--node-id"), refusal());
        assertTrue(refusal("--node-id", "Node_1").startsWith("--node-id Node_1 is not a valid node name"));
        assertTrue(refusal("--node-id=n", "--volume-group", "bad vg").startsWith("--volume-group bad vg "));
        assertTrue(refusal("--node-id=n", "--endpoint", "tcp://x:1").startsWith("--endpoint: "));
        assertEquals("--kubelet-dir lib is not valid: expected an absolute path",
                refusal("--node-id=n", "--kubelet-dir", "lib"));
        assertEquals("--cgroup-root a\0b is not valid: expected an absolute path",
                refusal("--node-id=n", "--cgroup-root", "a\0b"));
        assertTrue(refusal("--node-id=n", "--wipe-bps", "1Ki").startsWith("--wipe-bps 1Ki is not valid"));
        assertTrue(refusal("--node-id=n", "--wipe-bps", "fast").startsWith("--wipe-bps fast is not valid"));
        assertTrue(refusal("--node-id=n", "--metrics-address", "x").startsWith("--metrics-address: "));
        for (String timeout : List.of("0", "-3", "1.5", "abc", "99999999999")) {
            assertEquals("--probe-lvm-timeout " + timeout + " is not valid: expected a whole number of seconds of"
                    + " at least 1", refusal("--node-id=n", "--probe-lvm-timeout", timeout));
        }
        assertTrue(refusal("--node-id=n", "--log-level", "verbose").startsWith("--log-level: 'verbose' is not a"
                + " log level"));
        assertTrue(refusal("--node-id=n", "--log-wire=yes").startsWith("--log-wire takes no value"));
        assertTrue(refusal("--node-id=n", "--node-id=m").startsWith("--node-id is given more than once"));
    }

    @Test
    void anUnknownOptionIsRefusedWithTheValidOnes() {
        String message = refusal("--node-id=n", "--volume-groups=vg");
        assertTrue(message.startsWith("unknown option --volume-groups; the options are --endpoint, --node-id,"),
                message);
        for (String option : Main.optionNames()) {
            assertTrue(message.contains(option), option + " in " + message);
        }
    }

    @Test
    void helpDescribesEveryOption() {
        String help = Main.COMMAND_LINE.help();
        for (String option : Main.optionNames()) {
            assertTrue(help.contains("\n  " + option), option + " in\n" + help);
        }
        assertTrue(help.contains("(default: unix:///csi/csi.sock)"), help);
        assertTrue(help.contains("(default: 30)"), help);
        assertTrue(help.lines().allMatch(line -> line.length() <= 100), help);
        assertEquals(18, Main.optionNames().size(), Main.optionNames().toString());
    }
}
