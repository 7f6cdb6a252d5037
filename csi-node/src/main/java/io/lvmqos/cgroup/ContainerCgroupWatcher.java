package io.lvmqos.cgroup;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * cgroup v1: watches limited pods' blkio cgroups for container cgroups made below them, and hands
 * each new one to a callback (which copies the pod's throttle lines into it). The JDK's watch
 * service is inotify on Linux, and a mkdir in cgroupfs raises IN_CREATE on the parent like any
 * other. Each new directory is watched too, so a runtime that nests cgroups below a container's
 * is followed.
 *
 * <p>What is watched is not state of record: it is rebuilt at start-up from the publish mounts and
 * the pod cgroups' own throttle files. A lost event (queue overflow) copies the pod's lines into
 * every cgroup below every watched pod again.
 */
public final class ContainerCgroupWatcher implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ContainerCgroupWatcher.class);

    private final WatchService service;
    private final BiConsumer<Path, Path> onNewCgroup;
    /** Each watched directory's key, and the pod cgroup it belongs to. */
    private final Map<Path, WatchKey> keys = new ConcurrentHashMap<>();
    private final Map<WatchKey, Path> directories = new ConcurrentHashMap<>();
    private final Map<Path, Path> podOf = new ConcurrentHashMap<>();
    private final Thread thread;

    /** @param onNewCgroup called with (pod cgroup, new cgroup below it) on the watcher's own thread */
    public ContainerCgroupWatcher(BiConsumer<Path, Path> onNewCgroup) {
        try {
            this.service = FileSystems.getDefault().newWatchService();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start watching cgroups: " + e.getMessage(), e);
        }
        this.onNewCgroup = onNewCgroup;
        this.thread = Thread.ofPlatform().daemon().name("cgroup-watch").unstarted(this::run);
        thread.start();
    }

    /**
     * Watches the pod cgroup and every cgroup below it; idempotent. Call before writing the pod's
     * limits into its existing children, so that a child made in between is not missed.
     */
    public void watch(Path podCgroup) {
        register(podCgroup, podCgroup);
        for (Path child : CgroupLimitsWriter.descendants(podCgroup)) {
            register(podCgroup, child);
        }
    }

    /** Stops watching the pod cgroup and everything below it. */
    public void unwatch(Path podCgroup) {
        for (Path dir : List.copyOf(keys.keySet())) {
            if (dir.startsWith(podCgroup)) {
                forget(dir);
            }
        }
    }

    public boolean isWatching(Path podCgroup) {
        return keys.containsKey(podCgroup);
    }

    private void register(Path pod, Path dir) {
        if (keys.containsKey(dir)) {
            return;
        }
        try {
            WatchKey key = dir.register(service, StandardWatchEventKinds.ENTRY_CREATE);
            podOf.put(dir, pod);
            directories.put(key, dir);
            keys.put(dir, key);
        } catch (NoSuchFileException gone) {
            // a container cgroup removed before it could be watched
        } catch (IOException e) {
            throw new UncheckedIOException("cannot watch cgroup " + dir + ": " + e.getMessage(), e);
        }
    }

    private void forget(Path dir) {
        WatchKey key = keys.remove(dir);
        podOf.remove(dir);
        if (key != null) {
            directories.remove(key);
            key.cancel();
        }
    }

    private void run() {
        while (true) {
            WatchKey key;
            try {
                key = service.take();
            } catch (InterruptedException | ClosedWatchServiceException stop) {
                return;
            }
            Path dir = directories.get(key);
            try {
                if (dir != null) {
                    handle(dir, key.pollEvents());
                } else {
                    key.pollEvents();
                }
            } catch (RuntimeException e) {
                log.warn("cgroup watch: handling events in {} failed: {}", dir, e.toString());
            }
            if (!key.reset() && dir != null) {
                forget(dir); // the directory is gone: a container cgroup removed
            }
        }
    }

    private void handle(Path dir, List<WatchEvent<?>> events) {
        Path pod = podOf.get(dir);
        if (pod == null) {
            return;
        }
        for (WatchEvent<?> event : events) {
            if (event.kind() == StandardWatchEventKinds.OVERFLOW) {
                log.warn("cgroup watch: events were lost; copying the limits into every watched pod's cgroups again");
                for (Path watched : List.copyOf(podOf.values()).stream().distinct().toList()) {
                    watch(watched);
                    for (Path child : CgroupLimitsWriter.descendants(watched)) {
                        onNewCgroup.accept(watched, child);
                    }
                }
                continue;
            }
            Path created = dir.resolve((Path) event.context());
            if (!Files.isDirectory(created)) {
                continue;
            }
            // copy first, as that closes the window in which the container runs unlimited;
            // then watch it, then look below it: a cgroup nested in it meanwhile is still caught
            onNewCgroup.accept(pod, created);
            register(pod, created);
            for (Path below : CgroupLimitsWriter.descendants(created)) {
                register(pod, below);
                onNewCgroup.accept(pod, below);
            }
        }
    }

    @Override
    public void close() {
        try {
            service.close();
        } catch (IOException e) {
            log.debug("closing the cgroup watch service: {}", e.toString());
        }
        thread.interrupt();
    }
}
