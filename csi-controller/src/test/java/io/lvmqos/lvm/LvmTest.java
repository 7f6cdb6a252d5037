package io.lvmqos.lvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.Command;
import io.lvmqos.exec.CommandResult;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/** How lvm's failures (stderr texts of lvm 2.03) become driver exceptions. */
class LvmTest {

    static DriverException classify(String verb, int exitCode, String stderr) {
        Command command = Command.of(Path.of("/usr/sbin/lvm"), Duration.ofSeconds(30), verb, "--", "vg0");
        return Lvm.classify(new CommandResult(command, exitCode, "", stderr));
    }

    @ParameterizedTest(name = "[{index}] {2}")
    @CsvSource(delimiter = '|', textBlock = """
            lvcreate | '  Volume group "vg0" has insufficient free space (356 extents): 25600 required.'   | ResourceExhausted
            lvcreate | '  Insufficient suitable allocatable extents for logical volume vol_a: 25600 more required' | ResourceExhausted
            lvcreate | '  Volume group "novg" not found\n  Cannot process volume group novg'                   | FailedPrecondition
            lvcreate | '  Pool nopool not found in Volume group vg0.'                                              | FailedPrecondition
            lvs      | '  Failed to find logical volume "vg0/nope"'                                                  | NotFound
            lvremove | '  Logical volume vg0/vol_a contains a filesystem in use.'                                   | FailedPrecondition
            lvremove | '  Logical volume vg0/vol_a in use.'                                                          | FailedPrecondition
            lvcreate | '  Logical Volume "vol_a" already exists in volume group "vg0"'                              | AlreadyExists
            lvcreate | '  Device /dev/sdb excluded by a filter.'                                                    | Internal
            lvs      | ''                                                                                            | Internal
            """)
    void classifiesLvmsMessage(String verb, String stderr, String kind) {
        DriverException failure = classify(verb, 5, stderr.replace("\\n", "\n"));
        assertEquals(kind, failure.getClass().getSimpleName(), failure.getMessage());
    }

    @Test
    void theMessageKeepsLvmsWordsAndTheVerb() {
        String message = classify("lvcreate", 5,
                "  Volume group \"vg0\" has insufficient free space (356 extents): 25600 required.\n").getMessage();
        assertTrue(message.startsWith("lvcreate failed: "), message);
        assertTrue(message.contains("Volume group \"vg0\" has insufficient free space (356 extents): 25600 required."),
                message);
    }

    @Test
    void anUnclassifiedFailureCarriesTheExitCode() {
        String message = classify("lvchange", 3, "  Internal error: something odd").getMessage();
        assertTrue(message.contains("Internal error: something odd") && message.contains("exit 3"), message);
    }

    @Test
    void stdoutIsUsedWhenStderrIsEmpty() {
        Command command = Command.of(Path.of("/usr/sbin/lvm"), Duration.ofSeconds(30), "lvs");
        DriverException failure = Lvm.classify(new CommandResult(command, 5,
                "  Failed to find logical volume \"vg0/nope\"\n", ""));
        assertEquals(DriverException.NotFound.class, failure.getClass());
    }
}
