package io.lvmqos.lvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.Command;
import io.lvmqos.exec.CommandResult;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * How lvm's failures become driver exceptions. Each row's stderr is what lvm 2.03.16 printed in the
 * user-mode-Linux guest (LC_ALL=C) for the command and situation named, captured 2026-12-03 with
 * {@code lvm <verb> ... 2>err}; LvmMessagesCheck provokes the same situations from the real lvm.
 */
class LvmFailureTest {

    static CommandResult failed(String verb, int exitCode, String stderr) {
        Command command = Command.of(Path.of("/usr/sbin/lvm"), Duration.ofSeconds(30), verb, "--", "vg0");
        return new CommandResult(command, exitCode, "", stderr);
    }

    static DriverException classify(String verb, int exitCode, String stderr) {
        return LvmFailure.classify(failed(verb, exitCode, stderr));
    }

    @ParameterizedTest(name = "[{index}] {0}: {2}")
    @CsvSource(delimiter = '|', textBlock = """
            vgs: missing group                | '  Volume group "nosuchvg" not found\\n  Cannot process volume group nosuchvg'      | FailedPrecondition
            lvs vg/lv: missing group          | '  Volume group "nosuchvg" not found\\n  Cannot process volume group nosuchvg'      | FailedPrecondition
            lvs vg/lv: missing LV             | '  Failed to find logical volume "lvmqos/nosuchlv"'                                 | NotFound
            lvchange: missing LV              | '  Failed to find logical volume "lvmqos/nosuchlv"'                                 | NotFound
            lvextend: missing LV              | '  Logical volume nosuchlv not found in volume group lvmqos.'                       | NotFound
            lvcreate snapshot: missing origin | '  Snapshot origin LV nosuchorigin not found in Volume group lvmqos.'                | NotFound
            lvcreate thin: missing pool       | '  Pool nopool not found in Volume group lvmqos.'                                   | FailedPrecondition
            lvcreate thin: pool is linear     | '  Logical volume lvmqos/dup is not a thin pool.'                                   | FailedPrecondition
            lvcreate linear: no room          | '  Volume group "lvmqos" has insufficient free space (509 extents): 16384 required.' | ResourceExhausted
            lvextend linear: no room          | '  Insufficient free space: 16382 extents needed, but only 507 available'          | ResourceExhausted
            lvcreate thin: pool full          | '  WARNING: Thin pool lvmqos/small is out of data space.\\n  Cannot create new thin volume, free space in thin pool lvmqos/small reached threshold.' | ResourceExhausted
            lvremove: mounted                 | '  Logical volume lvmqos/dup contains a filesystem in use.'                         | FailedPrecondition
            lvremove: open                    | '  Logical volume lvmqos/dup in use.'                                               | FailedPrecondition
            lvremove: held by a dm device     | '  Logical volume lvmqos/held is used by another device.'                           | FailedPrecondition
            lvcreate: name taken              | '  Logical Volume "dup" already exists in volume group "lvmqos"'                    | AlreadyExists
            lvcreate thin: pool component on  | '  Activation of logical volume lvmqos/thinpool is prohibited while logical volume lvmqos/thinpool_tmeta is active.\\n  Aborting. Failed to locally activate thin pool lvmqos/thinpool.' | FailedPrecondition
            lvremove: pool change half sent   | '  device-mapper: message ioctl on  (254:2) failed: File exists\\n  Failed to process message "create_snap 2 1".\\n  Thin pool lvmqos-thinpool-tpool (254:2) already contain thin device with device_id 2.\\n  Manual intervention may be required to remove device dev_id=2 in thin pool metadata.\\n  Optionally new thin volume with device_id=2 can be manually added into a volume group.\\n  WARNING: When uncertain how to do this, contact support!\\n  Failed to suspend lvmqos/thinpool with queued messages.\\n  Failed to update pool lvmqos/thinpool.' | FailedPrecondition
            lvchange: thin device gone        | '  device-mapper: reload ioctl on  (254:4) failed: No data available'                | FailedPrecondition
            vgs: lock not waited for          | '  /run/lock/lvm/V_lvmqos: flock failed: Resource temporarily unavailable\\n  Can''t get lock for lvmqos.\\n  Cannot process volume group lvmqos' | Unavailable
            lvextend: same size               | '  New size (2 extents) matches existing size (2 extents).'                         | Internal
            lvextend: smaller                 | '  New size given (1 extents) not larger than existing size (2 extents)'            | Internal
            lvcreate: invalid name            | '  Logical volume name "bad name" is invalid.\\n  Run `lvcreate --help'' for more information.' | Internal
            lvcreate: invalid tag             | '  Invalid argument for --addtag: bad tag!\\n  Error during parsing of command line.' | Internal
            lvs: nothing said                 | ''                                                                                  | Internal
            """)
    void classifiesTheLinesLvmPrints(String situation, String stderr, String kind) {
        DriverException failure = classify(situation.substring(0, situation.indexOf(' ')).replace(":", ""), 5,
                stderr.replace("\\n", "\n") + "\n");
        assertEquals(kind, failure.getClass().getSimpleName(), situation + ": " + failure.getMessage());
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', textBlock = """
            a line that merely contains the words   | '  Device /dev/sdb not found (or ignored by filtering).'
            another object not found                | '  Thin pool lvmqos/x not found'
            a wrapped message                       | '  lvcreate: Volume group "vg0" not found and more'
            """)
    void aLineThatIsNotOneOfTheKnownOnesIsInternal(String what, String stderr) {
        assertEquals(DriverException.Internal.class, classify("lvcreate", 5, stderr).getClass(), what);
    }

    @Test
    void onlyAMissingGroupMakesAGroupReportEmpty() {
        assertTrue(LvmFailure.VOLUME_GROUP_NOT_FOUND.isWhy(failed("vgs", 5,
                "  Volume group \"nosuchvg\" not found\n  Cannot process volume group nosuchvg\n")));
        assertEquals(false, LvmFailure.VOLUME_GROUP_NOT_FOUND.isWhy(failed("lvs", 5,
                "  Failed to find logical volume \"lvmqos/nosuchlv\"\n")));
        assertEquals(false, LvmFailure.VOLUME_GROUP_NOT_FOUND.isWhy(failed("lvs", 0,
                "  Volume group \"nosuchvg\" not found\n")), "a command that succeeded did not fail for any reason");
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
        DriverException failure = LvmFailure.classify(new CommandResult(command, 5,
                "  Failed to find logical volume \"vg0/nope\"\n", ""));
        assertEquals(DriverException.NotFound.class, failure.getClass());
    }

    @Test
    void theComponentThatKeepsAPoolFromActivatingIsNamed() {
        assertEquals("lvmqos/thinpool_tmeta", Lvm.activeComponent("Activation of logical volume lvmqos/thinpool is "
                + "prohibited while logical volume lvmqos/thinpool_tmeta is active."));
    }
}
