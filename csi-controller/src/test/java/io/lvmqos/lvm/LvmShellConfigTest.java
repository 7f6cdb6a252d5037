package io.lvmqos.lvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.exec.Command;
import io.lvmqos.exec.CommandResult;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Reading lvmconfig's answer and writing the shell's settings; the guest's LvmShellCheck uses the real lvm. */
class LvmShellConfigTest {

    private static final Command LVMCONFIG = Command.of(Path.of("/usr/sbin/lvm"), Duration.ofSeconds(1), "lvmconfig");

    @Test
    void lvmconfigsLinesAreReadByKeyAsPrinted() {
        CommandResult printed = new CommandResult(LVMCONFIG, 0, "backup_dir=\"/etc/lvm/backup\"\n"
                + "archive_dir=\"/etc/lvm/archive\"\nprofile_dir=\"/etc/lvm/profile\"\n", "");
        assertEquals(Map.of("backup/backup_dir", "\"/etc/lvm/backup\"", "backup/archive_dir", "\"/etc/lvm/archive\"",
                        "config/profile_dir", "\"/etc/lvm/profile\""),
                LvmShellConfig.parse(List.of("backup/backup_dir", "backup/archive_dir", "config/profile_dir"), printed));
    }

    @Test
    void aFailedLvmconfigReadsAsNothing() {
        CommandResult failed = new CommandResult(LVMCONFIG, 5, "", "Configuration node log/nosuch not found");
        assertTrue(LvmShellConfig.parse(List.of("log/nosuch"), failed).isEmpty());
    }

    @Test
    void theSettingsPinTheNodesDirectoriesAndAskForTheCommandLog() {
        String text = LvmShellConfig.settings(Map.of("backup/backup_dir", "\"/etc/lvm/backup\"", "backup/archive_dir",
                "\"/etc/lvm/archive\"", "config/profile_dir", "\"/etc/lvm/profile\""));
        assertTrue(text.contains("backup_dir = \"/etc/lvm/backup\""), text);
        assertTrue(text.contains("archive_dir = \"/etc/lvm/archive\""), text);
        assertTrue(text.contains("profile_dir = \"/etc/lvm/profile\""), text);
        assertTrue(text.contains("report_command_log = 1"), text);
        assertTrue(text.contains("command_log_selection = \"all\""), text);
    }
}
