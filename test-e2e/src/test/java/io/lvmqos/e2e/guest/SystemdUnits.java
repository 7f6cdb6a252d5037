package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.uml.GuestCommand.ok;

import io.lvmqos.e2e.uml.GuestCommand;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The calls a node's kubelet and runc make to systemd, made the same way here: over D-Bus to
 * org.freedesktop.systemd1's Manager (with {@code busctl}, which sends the same messages as their Go
 * D-Bus library). The properties are the ones runc's libcontainer systemd manager (v2, the unified
 * hierarchy) gives a unit it starts for kubelet: a description, the parent slice as {@code Wants=}
 * for a slice (as {@code Slice=} for a scope, with {@code Delegate=yes}), every accounting switch on
 * and no default dependencies; kubelet's resources then go through SetUnitProperties. Test-bed code:
 * the driver itself never talks to systemd.
 */
final class SystemdUnits {

    /** Where unit files of the running system may be written: systemd reads /run/systemd/system too. */
    static final Path RUNTIME_UNITS = Path.of("/run/systemd/system");
    private static final String DESTINATION = "org.freedesktop.systemd1";
    private static final String MANAGER_PATH = "/org/freedesktop/systemd1";
    private static final String MANAGER = "org.freedesktop.systemd1.Manager";
    private static final Duration JOB_TIMEOUT = Duration.ofSeconds(30);

    private SystemdUnits() {
    }

    // busctl's options end at "--": a unit name such as "-.slice" (the root slice) is not one of them.

    /** The properties of a unit property list, in D-Bus's "a(sv)" form: name, signature, value(s). */
    static final class Properties {
        private final Map<String, List<String>> entries = new LinkedHashMap<>();

        Properties bool(String name, boolean value) {
            entries.put(name, List.of("b", Boolean.toString(value)));
            return this;
        }

        Properties uint64(String name, long value) {
            entries.put(name, List.of("t", Long.toString(value)));
            return this;
        }

        Properties string(String name, String value) {
            entries.put(name, List.of("s", value));
            return this;
        }

        Properties strings(String name, List<String> values) {
            List<String> encoded = new ArrayList<>(List.of("as", Integer.toString(values.size())));
            encoded.addAll(values);
            entries.put(name, encoded);
            return this;
        }

        List<String> busctlArgs() {
            List<String> args = new ArrayList<>(List.of(Integer.toString(entries.size())));
            entries.forEach((name, value) -> {
                args.add(name);
                args.addAll(value);
            });
            return args;
        }
    }

    /**
     * A slice as kubelet's systemd cgroup manager makes a QoS or pod slice: StartTransientUnit with
     * libcontainer's properties, then SetUnitProperties with the pod's resources, then the wait for the
     * unit to be active (libcontainer waits for the job's end).
     */
    static void startSlice(String slice, String parent, Properties resources) {
        Properties properties = new Properties()
                .string("Description", "libcontainer container " + slice)
                .strings("Wants", List.of(parent))
                .bool("MemoryAccounting", true)
                .bool("CPUAccounting", true)
                .bool("IOAccounting", true)
                .bool("TasksAccounting", true)
                .bool("DefaultDependencies", false);
        startTransientUnit(slice, properties);
        awaitActive(slice);
        setUnitProperties(slice, resources);
    }

    static void startTransientUnit(String unit, Properties properties) {
        List<String> call = new ArrayList<>(List.of("busctl", "--", "call", DESTINATION, MANAGER_PATH, MANAGER,
                "StartTransientUnit", "ssa(sv)a(sa(sv))", unit, "replace"));
        call.addAll(properties.busctlArgs());
        call.add("0"); // no auxiliary units
        ok(call.toArray(String[]::new));
    }

    /** SetUnitProperties with runtime=true, as kubelet (through libcontainer's Set) changes a running pod's slice. */
    static void setUnitProperties(String unit, Properties properties) {
        if (properties.entries.isEmpty()) {
            return;
        }
        List<String> call = new ArrayList<>(List.of("busctl", "--", "call", DESTINATION, MANAGER_PATH, MANAGER,
                "SetUnitProperties", "sba(sv)", unit, "true"));
        call.addAll(properties.busctlArgs());
        ok(call.toArray(String[]::new));
    }

    /** StopUnit, as kubelet removes a pod's slice once the pod is gone. */
    static void stopUnit(String unit) {
        ok("busctl", "--", "call", DESTINATION, MANAGER_PATH, MANAGER, "StopUnit", "ss", unit, "replace");
        long deadline = System.nanoTime() + JOB_TIMEOUT.toNanos();
        while (GuestCommand.run("systemctl", "is-active", "--quiet", unit).succeeded()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(unit + " still active " + JOB_TIMEOUT.toSeconds() + " s after StopUnit");
            }
            sleep();
        }
    }

    static void awaitActive(String unit) {
        long deadline = System.nanoTime() + JOB_TIMEOUT.toNanos();
        while (!GuestCommand.run("systemctl", "is-active", "--quiet", unit).succeeded()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(unit + " not active " + JOB_TIMEOUT.toSeconds() + " s after its start: "
                        + GuestCommand.run("systemctl", "status", "--no-pager", unit).stdout());
            }
            sleep();
        }
    }

    /** A unit file of the running system (under /run, gone at the next boot), read by a daemon-reload. */
    static void writeUnit(String name, String text) throws IOException {
        Files.createDirectories(RUNTIME_UNITS);
        Files.writeString(RUNTIME_UNITS.resolve(name), text);
        ok("systemctl", "daemon-reload");
    }

    /** The cgroup systemd gave the unit, under the unified hierarchy's mount point. */
    static Path cgroupOf(Path hierarchy, String unit) {
        String group = ok("systemctl", "show", "--property=ControlGroup", "--value", unit).strip();
        if (group.isEmpty()) {
            throw new AssertionError(unit + " has no control group");
        }
        return hierarchy.resolve(group.substring(1));
    }

    /** systemd's own version line, e.g. {@code systemd 252 (252.38-1~deb12u1)}. */
    static String version() {
        return ok("systemctl", "--version").lines().findFirst().orElse("").strip();
    }

    private static void sleep() {
        try {
            Thread.sleep(100);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }
}
