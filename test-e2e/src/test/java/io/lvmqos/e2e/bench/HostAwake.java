package io.lvmqos.e2e.bench;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One busy loop per host CPU at nice 19 while a guest benchmark runs, when
 * {@code -Dlvmqos.benchHostAwake=true} asks for it. A user-mode-Linux guest switches between
 * host processes for nearly every system call, and on a host that is itself a virtual machine an
 * idle CPU halts and waits for the hypervisor to wake it: on the 2-core test machine a pipe round
 * trip between two processes took 42-45 us with the CPUs idle and 6-25 us with a nice-19 loop on
 * each (2026-12-05). The loops take only what the guest leaves, so the guest's figures then show
 * its own costs rather than the wake-ups. Off by default: the reports say which way they ran.
 */
final class HostAwake implements AutoCloseable {

    private final List<Process> loops;

    private HostAwake(List<Process> loops) {
        this.loops = loops;
    }

    static boolean asked() {
        return Boolean.getBoolean("lvmqos.benchHostAwake");
    }

    static HostAwake ifAsked() throws IOException {
        List<Process> loops = new ArrayList<>();
        if (asked()) {
            for (int i = 0; i < Runtime.getRuntime().availableProcessors(); i++) {
                loops.add(new ProcessBuilder("nice", "-n", "19", "sh", "-c", "while :; do :; done").start());
            }
        }
        return new HostAwake(loops);
    }

    @Override
    public void close() {
        for (Process loop : loops) {
            loop.destroyForcibly();
            try {
                loop.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
