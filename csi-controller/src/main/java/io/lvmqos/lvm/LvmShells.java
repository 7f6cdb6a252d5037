package io.lvmqos.lvm;

import io.lvmqos.exec.Command;
import io.lvmqos.exec.CommandResult;
import io.lvmqos.exec.CommandRunner;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The driver's long-lived lvm processes ({@link LvmShell}), kept per volume group: a command takes
 * an idle shell of its group or starts one, and gives it back when it has its result. How many run
 * at once is the {@link VolumeGroupLimiter}'s bound, which every command passes before it gets
 * here, so a group never has more shells than that. Shells idle for {@link #IDLE_LIMIT} are ended,
 * so an idle driver holds no lvm process. A shell that was stopped, or that died, is never given
 * out again; a command that found its shell dead before lvm read it is run on a fresh one.
 *
 * <p>The shells' configuration directory is made on first use ({@link LvmShellConfig}); a node
 * whose configuration refuses it, or where it cannot be made, runs every command as a fork, as
 * {@code --lvm-shell=false} does.
 */
public final class LvmShells implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LvmShells.class);
    static final Duration IDLE_LIMIT = Duration.ofSeconds(60);

    private final CommandRunner runner;
    private final Path lvm;
    private final Path workDir;
    private final Duration stopGrace;
    private final Map<String, Deque<LvmShell>> idle = new HashMap<>();
    private Optional<LvmShellConfig.Directory> systemDir;
    private boolean closed;
    private final Thread reaper;

    /**
     * @param workDir where the shells' configuration directory is made (the driver's own, not the node's)
     * @param stopGrace SIGTERM to SIGKILL for a shell that must be stopped: that of a metadata change
     */
    public LvmShells(CommandRunner runner, Path lvm, Path workDir, Duration stopGrace) {
        this.runner = runner;
        this.lvm = lvm;
        this.workDir = workDir;
        this.stopGrace = stopGrace;
        this.reaper = Thread.ofVirtual().name("lvm-shell-reaper").start(this::reapIdle);
    }

    /**
     * Runs {@code command} in a shell of the group, or empty when it must be forked: the shell
     * cannot take it ({@link LvmShell#canRun}) or the node has no shell configuration.
     */
    Optional<CommandResult> run(String volumeGroup, Command command) {
        if (!LvmShell.canRun(command) || systemDir().isEmpty()) {
            return Optional.empty();
        }
        // at most twice: a shell that had ended before it read the command ran nothing
        for (int attempt = 0; attempt < 2; attempt++) {
            LvmShell shell = take(volumeGroup);
            if (shell == null) {
                return Optional.empty();
            }
            Optional<CommandResult> result;
            try {
                result = shell.run(command);
            } finally {
                giveBack(volumeGroup, shell);
            }
            if (result.isPresent()) {
                return result;
            }
            log.info("lvm shell {} had ended; running {} in a new one", shell.pid(), command.display());
        }
        return Optional.empty();
    }

    private synchronized Optional<LvmShellConfig.Directory> systemDir() {
        if (systemDir == null) {
            try {
                systemDir = Optional.of(LvmShellConfig.prepare(runner, lvm, workDir));
                log.info("lvm commands run in long-lived lvm shells configured in {}", systemDir.get().path());
            } catch (LvmShellConfig.Refused | IOException | RuntimeException e) {
                systemDir = Optional.empty();
                log.warn("lvm commands are forked one by one: no lvm shell configuration ({})", e.getMessage());
            }
        }
        return systemDir;
    }

    private LvmShell take(String volumeGroup) {
        synchronized (this) {
            if (closed) {
                return null;
            }
            Deque<LvmShell> shells = idle.computeIfAbsent(volumeGroup, vg -> new ArrayDeque<>());
            while (!shells.isEmpty()) {
                LvmShell shell = shells.pollFirst(); // the most recently used: its caches are the warmest
                if (shell.usable()) {
                    return shell;
                }
                shell.close();
            }
        }
        return LvmShell.start(runner, lvm, systemDir.orElseThrow().path(), stopGrace);
    }

    private void giveBack(String volumeGroup, LvmShell shell) {
        synchronized (this) {
            if (!closed && shell.usable()) {
                idle.computeIfAbsent(volumeGroup, vg -> new ArrayDeque<>()).addFirst(shell);
                return;
            }
        }
        shell.close();
    }

    private void reapIdle() {
        while (true) {
            try {
                Thread.sleep(IDLE_LIMIT.dividedBy(4));
            } catch (InterruptedException e) {
                return;
            }
            List<LvmShell> ended = new ArrayList<>();
            synchronized (this) {
                for (Deque<LvmShell> shells : idle.values()) {
                    shells.removeIf(shell -> {
                        boolean end = !shell.usable() || shell.idleNanos() > IDLE_LIMIT.toNanos();
                        if (end) {
                            ended.add(shell);
                        }
                        return end;
                    });
                }
            }
            ended.forEach(LvmShell::close);
        }
    }

    /** Ends every idle shell; a shell still running a command is ended by its caller's stop. */
    @Override
    public void close() {
        List<LvmShell> all = new ArrayList<>();
        synchronized (this) {
            closed = true;
            idle.values().forEach(all::addAll);
            idle.clear();
        }
        reaper.interrupt();
        all.forEach(LvmShell::close);
        Optional<LvmShellConfig.Directory> dir;
        synchronized (this) {
            dir = systemDir == null ? Optional.empty() : systemDir;
        }
        dir.ifPresent(LvmShellConfig.Directory::remove);
    }
}
