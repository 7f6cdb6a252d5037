package io.lvmqos.e2e.uml;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Which host CPU a user-mode-Linux guest runs on. A UML guest is several host processes (its kernel,
 * one per guest address space, its disk I/O thread) that hand over to each other on nearly every
 * guest system call. Left to the host's scheduler they land on different CPUs, and every hand-over
 * becomes a cross-CPU wake-up; on a virtual machine whose other CPU is idle, that CPU has halted and
 * the hypervisor has to wake it first. Measured with {@code LvmShellBenchmark} on a 2-core VM: a
 * long-lived lvm process's {@code lvcreate} took 50 ms in one run and 180 ms in the next, depending
 * only on where the scheduler had put it, and a forked one 300-400 ms; with the guest on one host CPU
 * they took 62 and 105 ms in each of two runs. The guest has one CPU of its own, so one host CPU is
 * what it can use anyway.
 *
 * <p>System property {@value #PROPERTY}: {@code auto} (the default) takes the host CPUs this JVM may
 * run on in turn, so that guests started at the same time do not share one; a CPU number pins every
 * guest to that CPU; {@code off} leaves the placement to the host. Pinning needs {@code taskset}
 * (util-linux); without it the guest runs unpinned.
 */
final class HostCpuPin {

    static final String PROPERTY = "lvmqos.uml.hostCpu";

    private static final AtomicInteger NEXT = new AtomicInteger();

    private HostCpuPin() {
    }

    /** The words to put before the guest's command line: {@code taskset --cpu-list N}, or none. */
    static List<String> prefix() {
        Optional<Path> taskset = GuestHost.findOnPath("taskset");
        Optional<Integer> cpu = choose(System.getProperty(PROPERTY, "auto"), allowedCpus());
        if (taskset.isEmpty() || cpu.isEmpty()) {
            return List.of();
        }
        return List.of(taskset.get().toString(), "--cpu-list", cpu.get().toString());
    }

    /** The CPU for the next guest, given the property's value and the CPUs this process may use. */
    static Optional<Integer> choose(String setting, List<Integer> allowed) {
        String value = setting.strip();
        if (value.equals("off") || allowed.isEmpty()) {
            return Optional.empty();
        }
        if (value.equals("auto")) {
            return Optional.of(allowed.get(Math.floorMod(NEXT.getAndIncrement(), allowed.size())));
        }
        try {
            return Optional.of(Integer.parseInt(value));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(PROPERTY + " is auto, off or a CPU number, not '" + setting + "'");
        }
    }

    /** The CPUs this process may run on, from {@code Cpus_allowed_list} in /proc/self/status. */
    static List<Integer> allowedCpus() {
        try {
            return Files.readAllLines(Path.of("/proc/self/status")).stream()
                    .filter(line -> line.startsWith("Cpus_allowed_list:"))
                    .map(line -> parseList(line.substring(line.indexOf(':') + 1)))
                    .findFirst().orElse(List.of());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read /proc/self/status", e);
        }
    }

    /** A kernel CPU list such as {@code 0-3,8,10-11}. */
    static List<Integer> parseList(String list) {
        List<Integer> cpus = new ArrayList<>();
        for (String part : list.strip().split(",")) {
            if (part.isBlank()) {
                continue;
            }
            int dash = part.indexOf('-');
            int first = Integer.parseInt(part.substring(0, dash < 0 ? part.length() : dash).strip());
            int last = dash < 0 ? first : Integer.parseInt(part.substring(dash + 1).strip());
            for (int cpu = first; cpu <= last; cpu++) {
                cpus.add(cpu);
            }
        }
        return cpus;
    }
}
