package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lvmqos.e2e.RegistrationClient;
import io.lvmqos.e2e.deploy.DeployedSidecar;
import io.lvmqos.e2e.pluginregistration.PluginRegistration;
import io.lvmqos.e2e.uml.GuestEnv;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * kubernetes-csi's own sidecars beside the driver: node-driver-registrar and livenessprobe, the
 * programs of ../shared/csi-tools, run with the arguments deploy/kubernetes/daemonset.yaml gives
 * them (read from the file, so that a deployed argument a program refuses fails here), the check
 * playing kubelet's plugin watcher against the registrar and kubelet's liveness probe against
 * livenessprobe. What each step saw goes to {@code $LVMQOS_OUT/sidecars.txt} for the host to print.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
public class SidecarCheck {

    /** Guest environment variable set by SidecarIT: the directory holding the programs. */
    public static final String TOOLS = "LVMQOS_CSI_TOOLS";
    public static final String REPORT = "sidecars.txt";
    /** The registrar's image name in the DaemonSet, and its program's name in the tools directory. */
    static final String REGISTRAR_IMAGE = "csi-node-driver-registrar";
    static final String REGISTRAR = "node-driver-registrar";
    /** livenessprobe's, which are the same. */
    static final String LIVENESSPROBE = "livenessprobe";
    /** The guest's stand-in for the host's /var/lib/kubelet/plugins_registry, which kubelet watches. */
    static final Path REGISTRY = GuestDriver.KUBELET.resolve("plugins_registry");
    /** livenessprobe's answer when the driver's Probe says ready=false. */
    private static final String NOT_READY = "driver responded but is not ready";
    /** How long a program may take to do what it was started for; a bound for failing, not a figure checked. */
    private static final Duration BOUND = Duration.ofSeconds(90);

    @RegisterExtension
    static final DriverForTheClass driverPerTest = DriverForTheClass
            .withGuestArgs(() -> List.of("--driver-name", DeployedSidecar.driverName())).startedByEachTest();

    @Test
    @Order(1)
    void registrarRegistersTheDriverAsKubeletAcceptsIt() throws Exception {
        GuestDriver driver = driverPerTest.start();
        DeployedSidecar deployed = DeployedSidecar.of(REGISTRAR_IMAGE);
        try (RegistrarContainer container = RegistrarContainer.start(deployed)) {
            SidecarProcess registrar = container.awaitRegistrationSocket();
            Path socket = registrationSocket();
            PluginRegistration.PluginInfo info;
            try (RegistrationClient kubelet = RegistrationClient.connect(socket)) {
                info = kubelet.getInfo();
                record("GetInfo on %s: type=%s name=%s endpoint=%s supported_versions=%s", socket, info.getType(),
                        info.getName(), info.getEndpoint(), info.getSupportedVersionsList());
                // kubelet's handler for the type, then its CSI handler's ValidatePlugin
                assertEquals("CSIPlugin", info.getType());
                assertEquals(DeployedSidecar.driverName(), info.getName());
                assertEquals(driver.client().identity().getPluginInfo(Csi.GetPluginInfoRequest.getDefaultInstance())
                        .getName(), info.getName(), "the registrar registers the name the driver gives itself");
                assertEquals(flag(deployed.args(), "--kubelet-registration-path"), info.getEndpoint());
                List<String> versions = info.getSupportedVersionsList();
                String version = kubeletsCsiVersion(versions).orElseThrow(
                        () -> new AssertionError("kubelet accepts none of " + versions));
                // kubelet's RegisterPlugin then asks the driver at the endpoint for its node: the host path
                // the endpoint names is, in this guest, the driver's socket
                String nodeId = driver.client().node().nodeGetInfo(Csi.NodeGetInfoRequest.getDefaultInstance())
                        .getNodeId();
                assertEquals(GuestDriver.NODE, nodeId);
                kubelet.notifyRegistrationStatus(true, "");
                record("kubelet's validation: CSI version %s taken; NodeGetInfo at the endpoint: node %s;"
                        + " NotifyRegistrationStatus{plugin_registered: true} answered", version, nodeId);
            }
            String address = loopback(flag(deployed.args(), "--http-endpoint"));
            Healthz health = awaitHealthz(registrar, address, Healthz::ok);
            record("registrar /healthz at %s: %s", address, health);
            registrar.await("the registrar's log of kubelet's verdict",
                    () -> logOf(registrar).contains("PluginRegistered:true"), BOUND);
            assertTrue(registrar.alive(), "the registrar serves on after kubelet took the registration");
        }
    }

    @Test
    @Order(2)
    void registrarThatCannotReachTheDriverKeepsTryingAndRegistersNothingUntilItCan() throws Exception {
        // no driver yet, as when the plugin container has not opened its socket
        Files.deleteIfExists(GuestDriver.SOCKET);
        DeployedSidecar deployed = DeployedSidecar.of(REGISTRAR_IMAGE);
        try (RegistrarContainer container = RegistrarContainer.start(deployed)) {
            SidecarProcess registrar = container.program();
            // klog's structured line from csi-lib-utils' connection loop, every 10 s while the dial has not succeeded
            String waiting = "\"Still connecting\" address=\"unix://" + GuestDriver.SOCKET + "\"";
            registrar.await("'" + waiting + "' in its log", () -> logOf(registrar).contains(waiting), BOUND);
            String address = loopback(flag(deployed.args(), "--http-endpoint"));
            Healthz health = Healthz.get(address);
            record("registrar without a driver: logs %s, registration socket present: %s, /healthz: %s", waiting,
                    Files.exists(registrationSocket()), health);
            assertFalse(Files.exists(registrationSocket()), "nothing for kubelet to register");
            assertEquals(OptionalInt.empty(), health.code(), "its HTTP server starts only with the registration");

            GuestDriver driver = driverPerTest.start();
            container.awaitRegistrationSocket();
            try (RegistrationClient kubelet = RegistrationClient.connect(registrationSocket())) {
                String name = kubelet.getInfo().getName();
                record("registrar once the driver serves: GetInfo name=%s", name);
                assertEquals(driver.client().identity().getPluginInfo(Csi.GetPluginInfoRequest.getDefaultInstance())
                        .getName(), name);
            }
        }
    }

    @Test
    @Order(3)
    void registrationKubeletRefusesEndsTheRegistrar() throws Exception {
        driverPerTest.start();
        try (RegistrarContainer container = RegistrarContainer.start(DeployedSidecar.of(REGISTRAR_IMAGE))) {
            SidecarProcess registrar = container.awaitRegistrationSocket();
            String refusal = "RegisterPlugin error -- plugin validation failed with err: refused by the check";
            try (RegistrationClient kubelet = RegistrationClient.connect(registrationSocket())) {
                kubelet.getInfo();
                // the registrar exits inside the call, so kubelet's notification gets no answer
                StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                        () -> kubelet.notifyRegistrationStatus(false, refusal));
                assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.toString());
                int exit = registrar.awaitExit(BOUND);
                record("registrar told plugin_registered=false: NotifyRegistrationStatus %s, registrar exit code %d"
                        + " (on which kubelet restarts its container)", e.getStatus().getCode(), exit);
                assertEquals(1, exit);
            }
            assertTrue(registrar.log().contains("\"Registration process failed with error, restarting registration"
                    + " container\" err=\"" + refusal + "\""), registrar.log());
        }
    }

    @Test
    @Order(4)
    void livenessprobeIsHealthyExactlyWhileTheDriversProbeIsReady() throws Exception {
        driverPerTest.start();
        DeployedSidecar deployed = DeployedSidecar.of(LIVENESSPROBE);
        List<String> args = withFlag(deployed.args(), "--csi-address", GuestDriver.SOCKET.toString(), true);
        String address = loopback(flag(args, "--http-endpoint"));
        args = withFlag(args, "--http-endpoint", address, true);
        try (SidecarProcess probe = SidecarProcess.start(tool(LIVENESSPROBE), args)) {
            record("livenessprobe (deployed as %s) run with %s", deployed.image(), args);
            record("livenessprobe /healthz, driver ready: %s", awaitHealthz(probe, address, Healthz::ok));

            // HealthCheck's verdict turns not ready when lvm answers that a volume group does not exist
            // (docs/architecture.md, "What Probe means"): the group renamed away is that, and renamed back heals it
            String vg = GuestEnv.volumeGroup();
            String away = vg + "-away";
            ok("lvm", "vgrename", vg, away);
            Healthz gone;
            boolean probeReady;
            try {
                gone = awaitHealthz(probe, address, answer -> !answer.ok());
                probeReady = probeReady();
            } finally {
                ok("lvm", "vgrename", away, vg);
            }
            record("livenessprobe /healthz, volume group %s renamed away: %s (the driver's Probe: ready=%s)", vg, gone,
                    probeReady);
            assertEquals(OptionalInt.of(500), gone.code());
            assertEquals(NOT_READY, gone.text(), "livenessprobe's words for ready=false");
            assertFalse(probeReady);
            record("livenessprobe /healthz, volume group back: %s", awaitHealthz(probe, address, Healthz::ok));

            driverPerTest.kill();
            Healthz stopped = awaitHealthz(probe, address, answer -> !answer.ok());
            record("livenessprobe /healthz, driver killed: %s", stopped);
            assertEquals(OptionalInt.of(500), stopped.code(), "livenessprobe itself still answers, with a failure");

            driverPerTest.start();
            record("livenessprobe /healthz, driver started again: %s", awaitHealthz(probe, address, Healthz::ok));

            // Missing when the driver starts, as on a node labelled before its group was made: the driver
            // serves, answers not ready, says what to do, and turns ready once the group is there, in the
            // same process (the DaemonSet gives this /healthz to kubelet as readiness, so nothing restarts it)
            int earlier = driverPerTest.log().length(); // the guest's drivers share one log file
            ok("lvm", "vgrename", vg, away);
            Process started;
            Healthz missing;
            String log;
            try {
                driverPerTest.start();
                started = driverPerTest.process().process();
                // a just started driver's first Probe may outlast livenessprobe's 3 s: that answer is not this one
                missing = awaitHealthz(probe, address, answer -> answer.text().equals(NOT_READY));
                String[] read = {""};
                probe.await("the driver's log to say why it is not ready", () -> {
                    try {
                        read[0] = driverPerTest.log().substring(earlier);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                    return read[0].contains("not ready: volume group(s) [" + vg + "] not found");
                }, BOUND);
                log = read[0];
            } finally {
                ok("lvm", "vgrename", away, vg);
            }
            record("livenessprobe /healthz, driver started without volume group %s: %s", vg, missing);
            assertEquals(OptionalInt.of(500), missing.code());
            assertEquals(NOT_READY, missing.text());
            assertTrue(log.contains("create them, or keep the node plugin off this node"), log);
            Healthz found = awaitHealthz(probe, address, Healthz::ok);
            record("livenessprobe /healthz, volume group made after the start: %s, the same driver process alive: %s",
                    found, started.isAlive());
            assertTrue(started.isAlive(), "the driver that started without its group serves on once it is there");
            assertEquals(started, driverPerTest.process().process());
        }
    }

    /**
     * The registrar's container: the program with the deployed arguments, three of them changed for
     * this guest:
     * <ul>
     *   <li>{@code --csi-address}: the container's /csi/csi.sock is the host's kubelet plugin
     *       directory; this guest's driver listens at {@link GuestDriver#SOCKET};
     *   <li>{@code --plugin-registration-path}: the DaemonSet leaves the default, /registration, where
     *       the container mounts the host's plugins_registry; the guest's root is read-only, so the
     *       guest's kubelet directory stands for the host's (added, as the DaemonSet does not give it);
     *   <li>{@code --http-endpoint}: the deployed port, on loopback only.
     * </ul>
     * {@code --kubelet-registration-path} stays as deployed: the registrar does not open it, it only
     * reports it to kubelet, which reaches the driver through it.
     *
     * <p>The registrar gives the driver's first GetPluginInfo its {@code --timeout}, which the
     * DaemonSet leaves at the default of 1 s, and exits 1 when it passes; kubelet then restarts the
     * container. A driver that has just opened its socket in this guest can take longer than that (it
     * did once: the check failed that way), so the program is started again on that exit, as kubelet
     * would (without its back-off), at most {@value #RESTARTS} times and each time in the check's
     * output; any other exit fails.
     */
    private static final class RegistrarContainer implements AutoCloseable {

        private static final int RESTARTS = 3;
        private static final String TIMED_OUT =
                "\"Error retreiving CSI driver name\" err=\"rpc error: code = DeadlineExceeded";

        private final List<String> args;
        private SidecarProcess program;
        private int restarts;

        private RegistrarContainer(List<String> args, SidecarProcess program) {
            this.args = args;
            this.program = program;
        }

        static RegistrarContainer start(DeployedSidecar deployed) throws IOException {
            GuestDriver.prepareKubeletDir();
            Files.createDirectories(REGISTRY);
            Files.deleteIfExists(registrationSocket());
            List<String> args = withFlag(deployed.args(), "--csi-address", GuestDriver.SOCKET.toString(), true);
            args = withFlag(args, "--plugin-registration-path", REGISTRY.toString(), false);
            args = withFlag(args, "--http-endpoint", loopback(flag(args, "--http-endpoint")), true);
            record("node-driver-registrar (deployed as %s; %s) run with %s", deployed.image(),
                    ok(tool(REGISTRAR).toString(), "--version").strip(), args);
            return new RegistrarContainer(args, SidecarProcess.start(tool(REGISTRAR), args));
        }

        SidecarProcess program() {
            return program;
        }

        /** Waits for the registration socket and returns the program that made it. */
        SidecarProcess awaitRegistrationSocket() throws IOException, InterruptedException {
            Path socket = registrationSocket();
            while (!program.awaitOrExit(() -> "registration socket " + socket, () -> Files.exists(socket), BOUND)) {
                int exit = program.awaitExit(Duration.ZERO);
                if (exit != 1 || !program.log().contains(TIMED_OUT) || restarts == RESTARTS) {
                    throw new AssertionError("node-driver-registrar exited " + exit + " (restarted " + restarts
                            + " times) before it made " + socket + "; its output:\n" + program.log());
                }
                restarts++;
                record("registrar exited 1: the driver's GetPluginInfo outlasted --timeout; started again, as kubelet"
                        + " restarts the container (restart %d)", restarts);
                program = SidecarProcess.start(tool(REGISTRAR), args);
            }
            return program;
        }

        @Override
        public void close() throws InterruptedException {
            program.close();
        }
    }

    /** kubelet's plugin watcher finds the registrar's socket here: {@code <registry>/<driver>-reg.sock}. */
    private static Path registrationSocket() {
        return REGISTRY.resolve(DeployedSidecar.driverName() + "-reg.sock");
    }

    private static Path tool(String program) {
        return Path.of(System.getenv(TOOLS)).resolve(program);
    }

    /** The value of {@code --name=value} in the arguments; fails when the flag is not given that way. */
    static String flag(List<String> args, String name) {
        return args.stream().filter(arg -> arg.startsWith(name + "=")).map(arg -> arg.substring(name.length() + 1))
                .findFirst().orElseThrow(() -> new AssertionError(name + " is not in " + args));
    }

    /**
     * The arguments with {@code --name=value} in place of the flag's deployed {@code --name=...}, or
     * added at the end; {@code required} fails when the flag was not given, so that a rewrite never
     * silently misses.
     */
    static List<String> withFlag(List<String> args, String name, String value, boolean required) {
        List<String> changed = new ArrayList<>();
        boolean found = false;
        for (String arg : args) {
            boolean match = arg.startsWith(name + "=");
            found |= match;
            changed.add(match ? name + "=" + value : arg);
        }
        if (!found) {
            if (required) {
                throw new AssertionError(name + " is not in the deployed arguments " + args);
            }
            changed.add(name + "=" + value);
        }
        return List.copyOf(changed);
    }

    /** {@code :9808} or {@code 0.0.0.0:9808} as {@code 127.0.0.1:9808}. */
    private static String loopback(String endpoint) {
        return "127.0.0.1:" + endpoint.substring(endpoint.lastIndexOf(':') + 1);
    }

    private static boolean probeReady() {
        return driverPerTest.client().identity().probe(Csi.ProbeRequest.getDefaultInstance()).getReady().getValue();
    }

    private static String logOf(SidecarProcess sidecar) {
        try {
            return sidecar.log();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static final Pattern KUBELET_VERSION = Pattern.compile("\\s*v?([0-9]+(?:\\.[0-9]+)*).*");

    /**
     * The CSI version kubelet would take from a plugin's supported_versions, or empty where kubelet
     * refuses the plugin: pkg/volume/csi/csi_plugin.go's highestSupportedVersion, which parses each
     * with utilversion.ParseGeneric (at least two numeric components, the first without a leading
     * zero), skips those above 1.x, keeps the highest and wants it to be 1.x.
     */
    static Optional<String> kubeletsCsiVersion(List<String> versions) {
        int[] highest = null;
        String taken = null;
        for (String version : versions) {
            Matcher matcher = KUBELET_VERSION.matcher(version);
            if (!matcher.matches()) {
                continue;
            }
            String[] parts = matcher.group(1).split("\\.");
            if (parts.length < 2 || (parts[0].startsWith("0") && !parts[0].equals("0"))) {
                continue;
            }
            int[] components = Arrays.stream(parts).mapToInt(Integer::parseInt).toArray();
            if (components[0] > 1) {
                continue;
            }
            if (highest == null
                    || Arrays.compare(padded(highest, components.length), padded(components, highest.length)) < 0) {
                highest = components;
                taken = version;
            }
        }
        return highest != null && highest[0] == 1 ? Optional.of(taken) : Optional.empty();
    }

    private static int[] padded(int[] components, int length) {
        return Arrays.copyOf(components, Math.max(length, components.length));
    }

    /** Polls GET /healthz until {@code wanted} holds; fails if the program exits or the bound passes. */
    private static Healthz awaitHealthz(SidecarProcess sidecar, String address, Predicate<Healthz> wanted)
            throws IOException, InterruptedException {
        Healthz[] last = {Healthz.get(address)};
        sidecar.await(() -> "/healthz answer as wanted at " + address + " (the last: " + last[0] + ")", () -> {
            if (!wanted.test(last[0])) {
                last[0] = Healthz.get(address);
            }
            return wanted.test(last[0]);
        }, BOUND);
        return last[0];
    }

    /** One GET of a sidecar's /healthz: its status and body, or why no answer came (empty code). */
    record Healthz(OptionalInt code, String text) {

        static Healthz get(String address) {
            try (HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()) {
                HttpRequest request = HttpRequest.newBuilder(URI.create("http://" + address + "/healthz"))
                        .timeout(Duration.ofSeconds(10)).build();
                HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
                return new Healthz(OptionalInt.of(response.statusCode()), response.body().strip());
            } catch (IOException e) {
                return new Healthz(OptionalInt.empty(), e.toString());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }

        boolean ok() {
            return code.equals(OptionalInt.of(200));
        }

        @Override
        public String toString() {
            return code.isPresent() ? code.getAsInt() + " \"" + text + "\"" : "no answer (" + text + ")";
        }
    }

    private static void record(String format, Object... values) {
        String line = format.formatted(values);
        System.out.println(line);
        try {
            Files.writeString(GuestEnv.outDir().resolve(REPORT), line + "\n", StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
