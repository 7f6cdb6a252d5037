package io.lvmqos.lvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.Command;
import io.lvmqos.exec.CommandResult;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * How a report of lvm's shell becomes the result a fork would have given. The reports are those
 * lvm 2.03.16 printed in the user-mode-Linux guest on 2026-12-05 with the shell's configuration
 * ({@link LvmShellConfig#settings}), shortened to the fields read here; the guest's
 * LvmShellCheck and LvmMessagesCheck run the same commands through the real shell.
 */
class LvmShellTest {

    private static final Command LVS = Command.of(Path.of("/usr/sbin/lvm"), Duration.ofSeconds(5), "lvs", "--", "vg");
    private static final Command LVCREATE = Command.of(Path.of("/usr/sbin/lvm"), Duration.ofSeconds(5), "lvcreate",
            "--name", "probe1", "--", "lvmqos");

    private static String entry(String type, String context, String objectType, String message, String retCode) {
        return "{\"log_seq_num\":\"1\", \"log_type\":\"" + type + "\", \"log_context\":\"" + context
                + "\", \"log_object_type\":\"" + objectType + "\", \"log_message\":\"" + message
                + "\", \"log_errno\":\"0\", \"log_ret_code\":\"" + retCode + "\"}";
    }

    private static String report(String rows, String... log) {
        return "  {\n" + rows + "      \"log\": [\n          " + String.join(",\n          ", log) + "\n      ]\n  }";
    }

    @Test
    void aSuccessfulReportIsExitZeroWithTheReportAsStdout() {
        String json = report("      \"report\": [ { \"lv\": [ {\"lv_name\":\"thinpool\"} ] } ]\n      ,\n",
                entry("status", "processing", "vg", "success", "1"),
                entry("status", "shell", "cmd", "success", "1"));
        CommandResult result = LvmShell.result(LVS, json, List.of());
        assertEquals(0, result.exitCode());
        assertEquals(json, result.stdout());
        assertEquals("", result.stderr());
    }

    @Test
    void warningsAreStderrAndPrintsAreNot() {
        String json = report("",
                entry("print", "processing", "vg", "Logical volume \\\"probe1\\\" created.", "0"),
                entry("warn", "processing", "vg", "WARNING: This metadata update is NOT backed up.", "0"),
                entry("status", "shell", "cmd", "success", "1"));
        CommandResult result = LvmShell.result(LVCREATE, json, List.of());
        assertTrue(result.succeeded());
        assertEquals("WARNING: This metadata update is NOT backed up.", result.stderr());
    }

    @Test
    void aFailureHasTheShellsReturnCodeAndLvmsErrorLinesSoItClassifiesAsAForkWould() {
        String json = report("",
                entry("error", "processing", "vg", "Logical Volume \\\"probe1\\\" already exists in volume group \\\"lvmqos\\\"", "0"),
                entry("status", "processing", "vg", "failure", "5"),
                entry("status", "shell", "cmd", "failure", "5"));
        CommandResult result = LvmShell.result(LVCREATE, json, List.of());
        assertEquals(5, result.exitCode());
        assertEquals("Logical Volume \"probe1\" already exists in volume group \"lvmqos\"", result.stderr());
        assertTrue(LvmFailure.classify(result) instanceof DriverException.AlreadyExists, result.toString());
    }

    @Test
    void aMissingGroupIsToldApartThroughTheShell() {
        String json = report("      \"report\": [ { \"lv\": [ ] } ]\n      ,\n",
                entry("error", "processing", "vg", "Volume group \\\"nosuchvg\\\" not found", "0"),
                entry("error", "processing", "vg", "Cannot process volume group nosuchvg", "0"),
                entry("status", "processing", "vg", "failure", "5"),
                entry("status", "shell", "cmd", "failure", "5"));
        assertTrue(LvmFailure.VOLUME_GROUP_NOT_FOUND.isWhy(LvmShell.result(LVS, json, List.of())));
    }

    @Test
    void whatLvmSaidOutsideTheReportComesFirstInStderr() {
        String json = report("",
                entry("error", "shell", "cmd", "Error during parsing of command line.", "0"),
                entry("status", "shell", "cmd", "failure", "3"));
        CommandResult result = LvmShell.result(LVCREATE, json, List.of("lvcreate: unrecognized option '--bogus'"));
        assertEquals(3, result.exitCode());
        assertEquals("lvcreate: unrecognized option '--bogus'\nError during parsing of command line.", result.stderr());
    }

    @Test
    void aReportWithoutTheShellsStatusIsAFailureThatSaysSo() {
        CommandResult result = LvmShell.result(LVS, report("", entry("status", "processing", "vg", "success", "1")),
                List.of());
        assertFalse(result.succeeded());
        assertTrue(result.stderr().contains("no status"), result.stderr());
    }

    @Test
    void onlyPlainArgumentsGoToTheShell() {
        Path lvm = Path.of("/usr/sbin/lvm");
        Duration t = Duration.ofSeconds(1);
        assertTrue(LvmShell.canRun(Command.of(lvm, t, "lvcreate", "--addtag", "lvmqos.name=dm9sLTE_Zm9v-Yg", "--size",
                "8388608b", "--", "vg/lv_1.2+x")));
        assertFalse(LvmShell.canRun(Command.of(lvm, t, "lvs", "--", "a b")), "a space would split the argument");
        assertFalse(LvmShell.canRun(Command.of(lvm, t, "lvs", "--", "a'b")), "quotes are the shell's");
        assertFalse(LvmShell.canRun(Command.of(lvm, t, "lvs", "--", "a\\b")));
        assertFalse(LvmShell.canRun(Command.of(lvm, t, "lvs", "--", "a\nlvremove")), "a second command line");
        assertFalse(LvmShell.canRun(Command.of(lvm, t, "lvchange", "--yes", "--activate", "y", "--", "vg/pool_tmeta")),
                "a component activation's mode would stay with the shell");
        assertFalse(LvmShell.canRun(Command.of(lvm, t, "lvchange", "--activate", "n", "--", "vg/pool_tdata")));
        assertFalse(LvmShell.canRun(Command.of(lvm, t, "lvs", "")), "an empty argument would vanish");
        assertFalse(LvmShell.canRun(Command.of(lvm, t, List.of())), "an empty line runs nothing and reports nothing");
    }
}
