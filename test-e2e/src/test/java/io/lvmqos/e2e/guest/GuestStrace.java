package io.lvmqos.e2e.guest;

import io.lvmqos.e2e.uml.GuestEnv;
import io.lvmqos.exec.CommandRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * strace attached to every thread of a running process in the guest (the guest's root is the
 * host's, so the host's strace is there) for the length of one piece of work: what the process did
 * meanwhile, counted ({@code strace -c -f}) or written out call by call with times and thread ids
 * ({@link #attach}). Attaching interrupts the calls the threads are blocked in; those come
 * back as {@code restart_syscall}, which {@link #ATTACH_ARTIFACT} names.
 */
final class GuestStrace {

    /** The row that attaching and detaching add, not the traced work. */
    static final String ATTACH_ARTIFACT = "restart_syscall";
    /** strace -c: "% time seconds usecs/call calls [errors] syscall", and its "total" row. */
    private static final Pattern SUMMARY_ROW =
            Pattern.compile("^\\s*[\\d.]+\\s+[\\d.]+\\s+\\d+\\s+(\\d+)\\s+(?:\\d+\\s+)?(\\w+)\\s*$");

    private GuestStrace() {
    }

    /** The work traced. */
    interface Work {
        void run() throws IOException;
    }

    /**
     * The system calls every thread of {@code pid} made while {@code work} ran, by name, and
     * {@code total}; strace's own table is left in {@code summary}.
     */
    static Map<String, Long> count(long pid, Path summary, Work work) throws Exception {
        attached(pid, List.of("-c", "-f", "-q", "-o", summary.toString()), work);
        Map<String, Long> counts = new LinkedHashMap<>();
        for (String line : Files.readAllLines(summary)) {
            Matcher m = SUMMARY_ROW.matcher(line);
            if (m.matches()) {
                counts.put(m.group(2), Long.parseLong(m.group(1)));
            }
        }
        return counts;
    }

    /** One system call as {@code strace -f -ttt} wrote it: the thread, when it began (µs since the epoch), its name. */
    record Call(long tid, long startMicros, String name) {
    }

    /** "<tid> <seconds>.<micros> <name>(" ; lines that resume a call begun earlier start with "<..." instead. */
    private static final Pattern CALL_LINE = Pattern.compile("^(\\d+)\\s+(\\d+)\\.(\\d{6})\\s+(\\w+)\\(.*");

    /**
     * strace attached to every thread of {@code pid} (and threads made later) until closed, writing
     * each system call with its thread and start time to {@code out}. One attach for a whole
     * measurement: under user-mode Linux a detach now and then leaves some of the process's
     * threads stopped for good (strace logs "ptrace_syscall_info.op == 2"), and the process stops
     * answering, so a session ends only when the process is no longer needed.
     */
    static Session attach(long pid, Path out) throws Exception {
        Process strace = start(pid, List.of("-f", "-ttt", "-q", "-o", out.toString()));
        try {
            awaitTraced(pid, strace);
        } catch (Exception | AssertionError e) {
            strace.destroy();
            throw e;
        }
        return new Session(strace);
    }

    /** The calls a session wrote to {@code out}, in the order strace wrote them (read once it is closed). */
    static List<Call> calls(Path out) throws IOException {
        List<Call> calls = new ArrayList<>();
        for (String line : Files.readAllLines(out)) {
            Matcher m = CALL_LINE.matcher(line);
            if (m.matches()) {
                calls.add(new Call(Long.parseLong(m.group(1)),
                        Long.parseLong(m.group(2)) * 1_000_000 + Long.parseLong(m.group(3)), m.group(4)));
            }
        }
        return calls;
    }

    /** An attached strace; closing it detaches. */
    static final class Session implements AutoCloseable {
        private final Process strace;

        private Session(Process strace) {
            this.strace = strace;
        }

        @Override
        public void close() throws InterruptedException {
            strace.destroy();
            strace.waitFor(60, TimeUnit.SECONDS);
        }
    }

    private static Process start(long pid, List<String> options) throws IOException {
        List<String> command = new ArrayList<>(List.of(program("strace").toString()));
        command.addAll(options);
        command.addAll(List.of("-p", Long.toString(pid)));
        return new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(GuestEnv.outDir().resolve("strace.log").toFile()))
                .start();
    }

    private static void attached(long pid, List<String> options, Work work) throws Exception {
        Process strace = start(pid, options);
        try {
            awaitTraced(pid, strace);
            work.run();
        } finally {
            strace.destroy(); // SIGTERM: strace detaches and writes its summary
            strace.waitFor(60, TimeUnit.SECONDS);
        }
    }

    /** Every thread of the process has a tracer once strace has attached to all of them. */
    private static void awaitTraced(long pid, Process strace) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            boolean all = true;
            try (var tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
                for (Path task : tasks.toList()) {
                    try {
                        all &= Files.readAllLines(task.resolve("status")).stream()
                                .anyMatch(l -> l.startsWith("TracerPid:") && !l.endsWith("\t0"));
                    } catch (IOException threadEnded) {
                        // a thread that ended needs no tracer
                    }
                }
            }
            if (all) {
                return;
            }
            if (!strace.isAlive() || System.nanoTime() > deadline) {
                throw new AssertionError("strace did not attach to every thread of " + pid);
            }
            Thread.sleep(20);
        }
    }

    /** A program in /bin (mount, umount, strace), else wherever the driver's runner finds it. */
    static Path program(String name) {
        Path bin = Path.of("/bin", name);
        return Files.isExecutable(bin) ? bin : CommandRunner.locate(name);
    }
}
