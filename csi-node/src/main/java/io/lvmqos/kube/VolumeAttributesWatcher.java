package io.lvmqos.kube;

import io.lvmqos.kube.VolumeClassReconciler.AttributesClass;
import io.lvmqos.kube.VolumeClassReconciler.Outcome;
import io.lvmqos.kube.VolumeClassReconciler.Volume;
import io.lvmqos.volume.VolumeId;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.HashSet;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings a change of VolumeAttributesClass to the node that owns the volume. The external-resizer
 * is leader-elected and calls ControllerModifyVolume on the plugin of its own node, which cannot
 * reach an LV of another node; it answers OK, and the resizer then records the class in the
 * PersistentVolume's {@code spec.volumeAttributesClassName}. This watcher, on every node, follows
 * the PersistentVolumes of this driver whose volume handle names this node, and the classes
 * they name, and applies a class's parameters whenever a volume's class (or the class) changes.
 *
 * <p>Each kind is listed first and then watched ({@link ListWatch}), so a plugin that was down
 * during a change applies it when it starts. Every PersistentVolume of the cluster passes through
 * (the API has no selector for a CSI driver or a volume handle), read as a stream of which five
 * fields are kept; only this node's volumes of this driver stay, in the reconciler, so the heap
 * holds one object in flight and this node's share, whatever the cluster's size
 * (DeployedFootprintBenchmark). A class whose parameters this driver refuses is logged and
 * skipped. Applying runs on one worker thread, never on the list-watch threads; what failed in a
 * way that may pass is tried again after a delay, and at each resync.
 */
public final class VolumeAttributesWatcher implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(VolumeAttributesWatcher.class);

    /** Each kept PersistentVolume is offered again this often: it retries what failed. */
    static final Duration RESYNC = Duration.ofMinutes(10);
    static final Duration RETRY_DELAY = Duration.ofSeconds(30);
    static final String VOLUMES = "/api/v1/persistentvolumes";
    static final String CLASSES = "/apis/storage.k8s.io/v1/volumeattributesclasses";

    private final String driverName;
    private final String nodeId;
    private final Duration retryDelay;
    private final Duration resync;
    private final VolumeClassReconciler reconciler;
    private final ScheduledExecutorService worker;
    /** Volumes with a retry scheduled; touched on the worker only. */
    private final Set<String> retrying = new HashSet<>();
    private final CompletableFuture<Void> classesListed = new CompletableFuture<>();
    private final CompletableFuture<Void> volumesListed = new CompletableFuture<>();
    private final ListWatch classWatch;
    private final ListWatch volumeWatch;
    private boolean started;
    private boolean closed;

    VolumeAttributesWatcher(String driverName, String nodeId, VolumeModifier modifier, KubeApi api,
                            ListWatch.Timing timing, Duration retryDelay, Duration resync) {
        this.driverName = Objects.requireNonNull(driverName);
        this.nodeId = Objects.requireNonNull(nodeId);
        this.retryDelay = Objects.requireNonNull(retryDelay);
        this.resync = Objects.requireNonNull(resync);
        this.reconciler = new VolumeClassReconciler(driverName, modifier);
        this.worker = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().daemon().name("kube-watch")
                .factory());
        this.classWatch = new ListWatch(api, CLASSES, "volumeattributesclasses",
                handler(this::classSeen, this::classGone, reconciler::retainClasses, classesListed, o -> true),
                timing);
        this.volumeWatch = new ListWatch(api, VOLUMES, "persistentvolumes",
                handler(this::volumeSeen, this::volumeGone, reconciler::retainVolumes, volumesListed,
                        o -> ours(o).isPresent()),
                timing);
    }

    /**
     * Talks to the API server as the pod's service account ({@link KubeApi}: in a pod, or wherever
     * {@code KUBERNETES_MASTER} says).
     */
    public static VolumeAttributesWatcher inCluster(String driverName, String nodeId, VolumeModifier modifier) {
        KubeApi.Config config = KubeApi.Config.fromEnvironment(System.getenv(), KubeApi.SERVICE_ACCOUNT);
        try {
            return new VolumeAttributesWatcher(driverName, nodeId, modifier, new KubeApi(config),
                    ListWatch.Timing.DEFAULT, RETRY_DELAY, RESYNC);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the API server's CA in " + config.caFile().orElseThrow()
                    + " cannot be used: " + e.getMessage(), e);
        } catch (IOException e) {
            throw new UncheckedIOException("the API server's CA cannot be read: " + e.getMessage(), e);
        }
    }

    /**
     * Starts listing and watching and returns at once; a missing API server or missing RBAC is
     * logged and retried with back-off, never thrown.
     */
    public synchronized void start() {
        if (started || closed) {
            throw new IllegalStateException("the watcher was started already");
        }
        started = true;
        // classes first, so that a volume is not reported as naming a class that is merely not read yet
        classesListed.thenRun(this::startVolumes);
        classWatch.start();
        worker.scheduleWithFixedDelay(guarded(this::resyncAll), resync.toMillis(), resync.toMillis(),
                TimeUnit.MILLISECONDS);
        volumesListed.thenRun(() -> log.info("watching the PersistentVolumes of driver {} on node {} and their"
                + " VolumeAttributesClasses", driverName, nodeId));
    }

    private synchronized void startVolumes() {
        if (!closed) {
            volumeWatch.start();
        }
    }

    /** Completes once the first full list of classes and of volumes has been applied. */
    public CompletionStage<Void> synced() {
        return CompletableFuture.allOf(classesListed, volumesListed);
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        volumeWatch.close();
        classWatch.close();
        worker.shutdown();
        try {
            if (!worker.awaitTermination(5, TimeUnit.SECONDS)) {
                worker.shutdownNow();
            }
        } catch (InterruptedException e) {
            worker.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    /** Whether both watches are open; for tests. */
    boolean watching() {
        return classWatch.watching() && volumeWatch.watching();
    }

    /** The names of the PersistentVolumes kept; for tests. */
    Set<String> cachedVolumeNames() throws Exception {
        return worker.submit(() -> Set.copyOf(reconciler.volumeNames())).get(10, TimeUnit.SECONDS);
    }

    /** Runs on the worker after everything handed to it so far; for tests. */
    void awaitIdle(Duration timeout) throws Exception {
        worker.submit(() -> { }).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void volumeSeen(KubeObject pv) {
        ours(pv).ifPresent(volume -> onWorker(() -> settle(volume.pvName(), reconciler.volumeSeen(volume))));
    }

    private void volumeGone(KubeObject pv) {
        String name = pv.name();
        onWorker(() -> reconciler.volumeGone(name));
    }

    private void classSeen(KubeObject vac) {
        AttributesClass attributesClass = new AttributesClass(vac.name(), vac.driverName(), vac.parameters());
        onWorker(() -> reconciler.classSeen(attributesClass).forEach(this::settle));
    }

    private void classGone(KubeObject vac) {
        String name = vac.name();
        onWorker(() -> reconciler.classGone(name));
    }

    /** On the worker: every kept volume once more, which retries what failed and costs nothing otherwise. */
    private void resyncAll() {
        for (String pvName : Set.copyOf(reconciler.volumeNames())) {
            reconciler.reconcile(pvName).ifPresent(outcome -> settle(pvName, outcome));
        }
    }

    /** A PersistentVolume of this driver whose volume is on this node; a foreign one is ignored. */
    private Optional<Volume> ours(KubeObject pv) {
        if (!driverName.equals(pv.csiDriver()) || pv.name().isEmpty()) {
            return Optional.empty();
        }
        return VolumeId.parse(VolumeId.Kind.VOLUME, pv.volumeHandle())
                .filter(id -> id.isOn(nodeId))
                .map(id -> new Volume(pv.name(), id, Optional.of(pv.className()).filter(name -> !name.isEmpty())));
    }

    /** On the worker: a failure that may pass is tried again later, once per volume at a time. */
    private void settle(String pvName, Outcome outcome) {
        if (outcome == Outcome.FAILED && retrying.add(pvName)) {
            try {
                worker.schedule(guarded(() -> {
                    retrying.remove(pvName);
                    reconciler.reconcile(pvName).ifPresent(again -> settle(pvName, again));
                }), retryDelay.toMillis(), TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException e) {
                log.debug("watcher closed; no retry for PV {}", pvName);
            }
        }
    }

    private void onWorker(Runnable task) {
        try {
            worker.execute(guarded(task));
        } catch (RejectedExecutionException e) {
            log.debug("watcher closed; event dropped");
        }
    }

    /** A failure of one event must not end the worker, nor pass unseen. */
    private static Runnable guarded(Runnable task) {
        return () -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                log.warn("unexpected failure while applying a VolumeAttributesClass", e);
            }
        };
    }

    /**
     * Hands the objects {@code kept} accepts to the worker; the list-watch thread only reads and
     * enqueues. A list ends by dropping what was kept and not listed again (deleted while no watch
     * was open); only the kept names of the list in progress are held for that.
     */
    private ListWatch.Handler handler(Consumer<KubeObject> seen, Consumer<KubeObject> gone,
                                      Consumer<Set<String>> retain, CompletableFuture<Void> listed,
                                      Predicate<KubeObject> kept) {
        return new ListWatch.Handler() {
            private Set<String> listing = new HashSet<>();
            private boolean inList;

            @Override
            public void listStarted() {
                listing = new HashSet<>();
                inList = true;
            }

            @Override
            public void seen(KubeObject object) {
                try {
                    if (kept.test(object)) {
                        if (inList) {
                            listing.add(object.name());
                        }
                        seen.accept(object);
                    }
                } catch (RuntimeException e) {
                    log.warn("could not read {} {}", object.name(), object, e);
                }
            }

            @Override
            public void gone(KubeObject object) {
                gone.accept(object);
            }

            @Override
            public void listed() {
                Set<String> names = listing;
                listing = new HashSet<>();
                inList = false;
                // after the list's own events, in order: the list has been applied when this runs
                onWorker(() -> {
                    retain.accept(names);
                    listed.complete(null);
                });
            }
        };
    }
}
