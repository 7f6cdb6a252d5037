package io.lvmqos.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CommandTest {

    @Test
    void argvIsTheProgramFollowedByItsArguments() {
        assertEquals(List.of("/usr/sbin/lvm", "lvs", "--", "vg0"),
                Command.of(Path.of("/usr/sbin/lvm"), Duration.ofSeconds(1), "lvs", "--", "vg0").argv());
    }

    @Test
    void displayJoinsTheArgvWithSpaces() {
        assertEquals("/usr/sbin/lvm lvs vg0",
                Command.of(Path.of("/usr/sbin/lvm"), Duration.ofSeconds(1), "lvs", "vg0").display());
    }

    @Test
    void aRelativeProgramIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> Command.of(Path.of("lvm"), Duration.ofSeconds(1)));
    }

    @ParameterizedTest(name = "{0} ms")
    @ValueSource(longs = {0, -1})
    void aTimeoutMustBePositive(long millis) {
        assertThrows(IllegalArgumentException.class,
                () -> Command.of(Path.of("/usr/sbin/lvm"), Duration.ofMillis(millis)));
    }

    @Test
    void diagnosticPrefersStderr() {
        assertEquals("bad", result("out", "  bad\n").diagnostic());
    }

    @Test
    void diagnosticFallsBackToStdoutWhenStderrIsBlank() {
        assertEquals("out", result("out\n", " \n").diagnostic());
    }

    @Test
    void diagnosticIsCutAt2000Characters() {
        assertEquals("x".repeat(2000) + "...", result("", "x".repeat(5000)).diagnostic());
    }

    static CommandResult result(String stdout, String stderr) {
        return new CommandResult(Command.of(Path.of("/bin/true"), Duration.ofSeconds(1)), 1, stdout, stderr);
    }
}
