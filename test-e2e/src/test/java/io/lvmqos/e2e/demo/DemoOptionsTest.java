package io.lvmqos.e2e.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class DemoOptionsTest {

    @Test
    void defaultsAre256MiVolumesAt8MiPerSecondAnd300Iops() {
        DemoOptions options = DemoOptions.parse(List.of());
        assertEquals(256L << 20, options.size().value());
        assertEquals(8L << 20, options.bps().value());
        assertEquals(300, options.iops().value());
        assertEquals(5, options.runtimeSeconds());
        assertEquals("896Mi", options.disk().text(), "three volumes and 128Mi for LVM");
        assertEquals(128, options.fileMebibytes());
    }

    @Test
    void valuesComeAsSeparateArgumentsOrAfterAnEqualsSign() {
        DemoOptions options = DemoOptions.parse(List.of("--size=128Mi", "--bps", "4Mi", "--iops=200", "--runtime", "3"));
        assertEquals(128L << 20, options.size().value());
        assertEquals("4Mi", options.bps().text(), "the StorageClass gets the text as typed");
        assertEquals(200, options.iops().value());
        assertEquals(3, options.runtimeSeconds());
        assertEquals(64, options.fileMebibytes());
    }

    @Test
    void theGuestGetsTheSameOptions() {
        DemoOptions options = DemoOptions.parse(List.of("--size", "1Gi", "--bps", "16Mi", "--disk", "8Gi"));
        assertEquals(options, DemoOptions.parse(options.toArgs()));
    }

    @ParameterizedTest
    @ValueSource(strings = {"--sise=1Gi", "--size", "--size=big", "--size=1.5", "--size=1Mi", "--bps=0",
            "--iops=10", "--runtime=1", "--runtime=5s", "--disk=512Mi", "extra", "--size= 256Mi",
            "--bps=0000000000000000008Mi"})
    void badOptionsAreRefusedWithTheOptionNamed(String arg) {
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> DemoOptions.parse(List.of(arg)));
        assertTrue(refused.getMessage().contains(arg.replaceAll("=.*", "")), refused.getMessage());
    }
}
