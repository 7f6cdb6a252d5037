package io.lvmqos.e2e.guest;

import io.lvmqos.e2e.CsiClient;
import io.lvmqos.e2e.DriverProcess;
import io.lvmqos.e2e.uml.GuestEnv;
import java.io.IOException;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The guest's driver for one check class, as a JUnit extension on a static field: started (in the
 * guest only; elsewhere the class is skipped) before the class's own {@code @BeforeAll} methods
 * and closed after its {@code @AfterAll} methods, so that a check's set-up and clean-up can both
 * call it.
 */
public final class DriverForTheClass implements BeforeAllCallback, AfterAllCallback {

    private final String[] extraArgs;
    private GuestDriver driver;

    /** @param extraArgs the plugin's options beyond those every guest driver gets */
    public DriverForTheClass(String... extraArgs) {
        this.extraArgs = extraArgs.clone();
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        GuestEnv.assumeInGuest();
        driver = GuestDriver.start(extraArgs);
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        if (driver != null) {
            driver.close();
        }
    }

    public CsiClient client() {
        return driver.client();
    }

    public DriverProcess process() {
        return driver.process();
    }

    /** SIGKILL, as a crash or an OOM kill would end it. */
    public void kill() throws Exception {
        driver.kill();
    }

    public void restart() throws Exception {
        driver.restart();
    }

    public String log() throws IOException {
        return driver.log();
    }
}
