package io.lvmqos.e2e.guest;

import io.lvmqos.e2e.CsiClient;
import io.lvmqos.e2e.DriverProcess;
import io.lvmqos.e2e.uml.GuestEnv;
import java.io.IOException;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The one way a check starts the guest's driver: a JUnit extension on a static field
 * ({@code @RegisterExtension static final DriverForTheClass driver = ...}). The class is skipped
 * outside the guest; whatever was started is closed after the class's own {@code @AfterAll} methods,
 * so that a check's clean-up can still call it.
 *
 * <p>When it starts, by the form chosen:
 * <ul>
 *   <li>{@code new DriverForTheClass(args)}: before the class's own {@code @BeforeAll} methods;
 *   <li>{@link #startedBySetUp()}: when the check's {@code @BeforeAll} calls {@link #start()}, for a
 *       check that must set something up before the driver sees the node (a held lock, a disk
 *       measured without the driver's io.cost);
 *   <li>{@link #startedByEachTest()}: when a test calls {@link #start()}, again after a kill if the
 *       test wants; closed after each test. For checks that need a fresh driver per test or replace
 *       a SIGKILLed one mid-test.
 * </ul>
 * {@link #as(String)} and {@link #behind(List)} give the node name and a command prefix (a mount
 * namespace, a cgroup). {@link GuestDriver} is the process this starts.
 */
public final class DriverForTheClass implements BeforeAllCallback, AfterEachCallback, AfterAllCallback {

    private enum Start { BEFORE_SET_UP, BY_SET_UP, BY_EACH_TEST }

    private final Start when;
    /** Asked for when the driver starts: options may name guest paths ({@link GuestEnv}). */
    private final Supplier<GuestDriver.Options> options;
    private GuestDriver driver;

    /** @param extraArgs the plugin's options beyond those every guest driver gets */
    public DriverForTheClass(String... extraArgs) {
        this(Start.BEFORE_SET_UP, () -> GuestDriver.Options.standard().args(List.of(extraArgs)));
    }

    private DriverForTheClass(Start when, Supplier<GuestDriver.Options> options) {
        this.when = when;
        this.options = options;
    }

    /**
     * Options read from the guest's environment ({@link GuestEnv}), so asked for when the driver
     * starts: outside the guest the class is skipped, not failed in its static initializer.
     */
    public static DriverForTheClass withGuestArgs(Supplier<List<String>> extraArgs) {
        return new DriverForTheClass(Start.BEFORE_SET_UP, () -> GuestDriver.Options.standard().args(extraArgs.get()));
    }

    /** The driver serving a node of another name than {@link GuestDriver#NODE}. */
    public DriverForTheClass as(String nodeName) {
        return new DriverForTheClass(when, () -> options.get().as(nodeName));
    }

    /** Started behind a command prefix, such as {@code unshare --mount} for its own mount namespace. */
    public DriverForTheClass behind(List<String> commandPrefix) {
        List<String> copy = List.copyOf(commandPrefix);
        return new DriverForTheClass(when, () -> options.get().behind(copy));
    }

    /** A command prefix naming guest paths ({@link GuestEnv}), so asked for when the driver starts. */
    public DriverForTheClass behind(Supplier<List<String>> commandPrefix) {
        return new DriverForTheClass(when, () -> options.get().behind(commandPrefix.get()));
    }

    /** Started by the check's {@code @BeforeAll} calling {@link #start()}, closed after the class. */
    public DriverForTheClass startedBySetUp() {
        return new DriverForTheClass(Start.BY_SET_UP, options);
    }

    /** Started by a test calling {@link #start()}, closed after each test. */
    public DriverForTheClass startedByEachTest() {
        return new DriverForTheClass(Start.BY_EACH_TEST, options);
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        GuestEnv.assumeInGuest();
        if (when == Start.BEFORE_SET_UP) {
            start();
        }
    }

    /**
     * Starts a driver and returns it; the one this fixture held before is closed first (a no-op when
     * it was killed). The returned process is the fixture's: it closes it, though closing it sooner
     * (try-with-resources) is harmless.
     */
    public GuestDriver start() throws Exception {
        close();
        driver = GuestDriver.start(options.get());
        return driver;
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        if (when == Start.BY_EACH_TEST) {
            close();
        }
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        close();
    }

    private void close() throws Exception {
        if (driver != null) {
            GuestDriver closing = driver;
            driver = null;
            closing.close();
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
