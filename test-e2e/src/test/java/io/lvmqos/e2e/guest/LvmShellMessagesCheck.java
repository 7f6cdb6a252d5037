package io.lvmqos.e2e.guest;

import io.lvmqos.e2e.uml.GuestEnv;
import java.nio.file.Files;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Every case of {@link LvmMessagesCheck} again, with the commands run in the driver's long-lived lvm
 * shells: lvm's messages reach the driver through the shell's log report there, not stderr, and must
 * be classified the same.
 */
public class LvmShellMessagesCheck extends LvmMessagesCheck {

    @BeforeAll
    static void inShells() throws Exception {
        GuestEnv.assumeInGuest();
        shellDir = Files.createTempDirectory("lvm-shell-messages");
        closeShells();
        driversLvm();
    }

    @AfterAll
    static void endShells() {
        closeShells();
        shellDir = null;
    }
}
