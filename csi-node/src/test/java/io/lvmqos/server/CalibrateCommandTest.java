package io.lvmqos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/** `lvmqos calibrate`'s command line: what it refuses before it touches anything. */
class CalibrateCommandTest {

    record Outcome(int exit, String out, String err) {
    }

    static Outcome run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = CalibrateCommand.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Outcome(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "--seconds=0|--seconds 0 is not valid",
            "--seconds=301|--seconds 301 is not valid",
            "--seconds=ten|--seconds ten is not valid",
            "--size=1Mi|--size 1Mi is not valid",
            "--size=100000001|is not a whole number of MiB",
            "--sequential-block=1000|--sequential-block 1000 is not valid",
            "--sequential-block=6Ki|is not a multiple of 4Ki",
            "--volume-group=../etc|--volume-group ../etc is not a valid volume group name",
            "--thin-pool=a/b|--thin-pool a/b is not a valid LV name",
            "--cgroup-root=sys/fs/cgroup|expected an absolute path",
            "--never-fail=yes|--never-fail"})
    void aBadArgumentIsRefusedWithExitTwoAndNothingMeasured(String argument, String message) {
        Outcome outcome = run(argument);
        assertEquals(CalibrateCommand.USAGE, outcome.exit(), outcome.err());
        assertTrue(outcome.err().contains(message), outcome.err());
        assertEquals("", outcome.out());
    }

    @Test
    void helpListsEveryOption() {
        Outcome outcome = run("--help");
        assertEquals(CalibrateCommand.OK, outcome.exit());
        for (String option : new String[] {"--volume-group", "--thin-pool", "--size", "--seconds", "--dry-run",
                "--if-uncalibrated", "--never-fail"}) {
            assertTrue(outcome.out().contains(option), outcome.out());
        }
    }
}
