package io.lvmqos.e2e.uml;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One running guest (linux.uml, or qemu) and every host process it forks. UML runs each guest address
 * space as a host process of its own, so ending a guest means ending that whole tree, which is what
 * {@link #killTree()} and {@link #close()} do; for qemu the tree is one process. Its console is copied
 * line by line to console.log (so a human can {@code tail -f} a slow run) and kept in memory for the
 * verdict.
 */
public final class GuestProcess implements AutoCloseable {
    private static final Duration READER_GRACE = Duration.ofSeconds(5);

    private final Process process;
    private final String signature;
    private final List<String> console = new ArrayList<>();
    private final Thread consoleReader;
    private final Thread shutdownHook;
    private final String kind;

    private GuestProcess(Process process, String kind, String signature, Writer consoleLog, boolean echo) {
        this.process = process;
        this.kind = kind;
        this.signature = signature;
        this.consoleReader = Thread.ofPlatform().daemon().name(kind + "-console").start(() -> copyConsole(consoleLog, echo));
        // A test JVM that is killed or interrupted must not leave a guest running behind it.
        this.shutdownHook = new Thread(this::killTree, kind + "-kill");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /**
     * Starts a guest. {@code kind} names it in thread names and echoed lines ({@code uml}, {@code qemu}).
     * {@code signature} is a piece of its command line that only this run has: UML's helper processes are
     * forks with the same command line, so it finds any that outlive their parent.
     */
    public static GuestProcess start(String kind, List<String> command, String signature, Path consoleLog, boolean echo)
            throws IOException {
        Writer log = Files.newBufferedWriter(consoleLog, UTF_8);
        try {
            Process process = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    // The console's input is a pipe kept open and never written: no terminal, and no end
                    // of file that the guest's console could take for a hang-up.
                    .redirectInput(ProcessBuilder.Redirect.PIPE)
                    .start();
            return new GuestProcess(process, kind, signature, log, echo);
        } catch (IOException | RuntimeException e) {
            log.close();
            throw e;
        }
    }

    /** Waits for the guest to end by itself; false if it was still running after {@code timeout}. */
    public boolean awaitExit(Duration timeout) {
        try {
            return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            killTree();
            throw new IllegalStateException("interrupted while the guest ran", e);
        }
    }

    public int exitValue() {
        return process.exitValue();
    }

    /** The console so far; after {@link #close()}, all of it. */
    public List<String> console() {
        synchronized (console) {
            return List.copyOf(console);
        }
    }

    /**
     * Kills every host process of this guest with SIGKILL, children before their parent so that none is
     * orphaned out of reach of {@link Process#descendants()} while we work, then any left over that still
     * carries the run's signature. Repeats until none is left, because the guest can fork meanwhile.
     */
    public void killTree() {
        for (int round = 0; round < 100; round++) {
            List<ProcessHandle> alive = Stream.concat(
                            Stream.concat(process.descendants(), Stream.of(process.toHandle())),
                            processesWith(signature).stream())
                    .filter(ProcessHandle::isAlive)
                    .distinct()
                    .toList();
            if (alive.isEmpty()) {
                return;
            }
            alive.forEach(ProcessHandle::destroyForcibly);
            try {
                process.waitFor(50, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /**
     * Live host processes whose command line contains {@code signature}. Zombies have an empty command
     * line and so are not listed: they are dead, only not yet reaped.
     */
    public static List<ProcessHandle> processesWith(String signature) {
        try (Stream<ProcessHandle> all = ProcessHandle.allProcesses()) {
            return all.filter(handle -> handle.pid() != ProcessHandle.current().pid())
                    .filter(handle -> handle.info().commandLine().filter(line -> line.contains(signature)).isPresent())
                    .toList();
        }
    }

    /**
     * Types {@code keys} on the guest's console input, which is otherwise a pipe kept open and never
     * written; false if the guest no longer reads it.
     */
    public boolean type(String keys) {
        try {
            process.getOutputStream().write(keys.getBytes(UTF_8));
            process.getOutputStream().flush();
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    @Override
    public void close() {
        killTree();
        try {
            process.getOutputStream().close();
            consoleReader.join(READER_GRACE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException shuttingDown) {
            // the hook is running or about to: nothing left to undo
        }
    }

    private void copyConsole(Writer log, boolean echo) {
        try (log; BufferedReader reader = new BufferedReader(new InputStreamReader(process.getInputStream(), UTF_8))) {
            for (String line; (line = reader.readLine()) != null; ) {
                // UML's console ends lines with \r\n.
                String clean = line.endsWith("\r") ? line.substring(0, line.length() - 1) : line;
                synchronized (console) {
                    console.add(clean);
                }
                log.write(clean);
                log.write('\n');
                log.flush();
                if (echo) {
                    System.out.println("[" + kind + "] " + clean);
                }
            }
        } catch (IOException e) {
            synchronized (console) {
                console.add("(harness: console read failed: " + e + ")");
            }
        }
    }
}
