package io.lvmqos.kube;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeSpec;
import io.fabric8.kubernetes.api.model.storage.VolumeAttributesClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.ReducedStateItemStore;
import io.lvmqos.kube.VolumeClassReconciler.AttributesClass;
import io.lvmqos.kube.VolumeClassReconciler.Outcome;
import io.lvmqos.kube.VolumeClassReconciler.Volume;
import io.lvmqos.volume.VolumeId;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
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
 * <p>Informers list everything first and then watch, so a plugin that was down during a change
 * applies it when it starts. The list is read a page at a time and only this node's volumes of this
 * driver are kept, so the heap holds one page and this node's share, whatever the cluster's size. A class whose parameters this driver refuses is logged and skipped.
 * Applying runs on one worker thread, never on the client's threads; what failed in a way that
 * may pass is tried again after a delay, and at each resync.
 *
 * <p>This class is the only one that touches the Kubernetes client: the process loads it (and the
 * client) only when watching is switched on.
 */
public final class VolumeAttributesWatcher implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(VolumeAttributesWatcher.class);

    /** Each cached PersistentVolume is offered again this often: it retries what failed. */
    static final Duration RESYNC = Duration.ofMinutes(10);
    static final Duration RETRY_DELAY = Duration.ofSeconds(30);
    /** The list at start is read in pages, so that a cluster's PersistentVolumes never sit in the heap at once. */
    private static final long LIST_PAGE = 250;

    private final String driverName;
    private final String nodeId;
    private final KubernetesClient client;
    private final boolean ownsClient;
    private final Duration retryDelay;
    private final Duration resync;
    private final VolumeClassReconciler reconciler;
    private final ScheduledExecutorService worker;
    /** Volumes with a retry scheduled; touched on the worker only. */
    private final Set<String> retrying = new HashSet<>();
    private final CompletableFuture<Void> classesListed = new CompletableFuture<>();
    private final CompletableFuture<Void> volumesListed = new CompletableFuture<>();
    private SharedIndexInformer<VolumeAttributesClass> classInformer;
    private SharedIndexInformer<PersistentVolume> volumeInformer;
    private boolean closed;

    private VolumeAttributesWatcher(String driverName, String nodeId, VolumeModifier modifier, KubernetesClient client,
                                    boolean ownsClient, Duration retryDelay, Duration resync) {
        this.driverName = Objects.requireNonNull(driverName);
        this.nodeId = Objects.requireNonNull(nodeId);
        this.client = Objects.requireNonNull(client);
        this.ownsClient = ownsClient;
        this.retryDelay = Objects.requireNonNull(retryDelay);
        this.resync = Objects.requireNonNull(resync);
        this.reconciler = new VolumeClassReconciler(driverName, modifier);
        this.worker = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().daemon().name("kube-watch")
                .factory());
    }

    /**
     * Talks to the API server as the pod's service account (outside a cluster: as the kubeconfig
     * says); the client is closed with the watcher.
     */
    public static VolumeAttributesWatcher inCluster(String driverName, String nodeId, VolumeModifier modifier) {
        return new VolumeAttributesWatcher(driverName, nodeId, modifier, new KubernetesClientBuilder().build(), true,
                RETRY_DELAY, RESYNC);
    }

    /** Uses the caller's client, which the caller closes. */
    public static VolumeAttributesWatcher create(String driverName, String nodeId, VolumeModifier modifier,
                                                 KubernetesClient client) {
        return create(driverName, nodeId, modifier, client, RETRY_DELAY, RESYNC);
    }

    static VolumeAttributesWatcher create(String driverName, String nodeId, VolumeModifier modifier,
                                          KubernetesClient client, Duration retryDelay, Duration resync) {
        return new VolumeAttributesWatcher(driverName, nodeId, modifier, client, false, retryDelay, resync);
    }

    /**
     * Starts listing and watching and returns at once; a missing API server or missing RBAC is
     * logged by the client and retried with back-off, never thrown.
     */
    public synchronized void start() {
        if (classInformer != null || closed) {
            throw new IllegalStateException("the watcher was started already");
        }
        // both kinds are cluster-scoped: the informers' default index by namespace would be empty weight
        classInformer = client.storage().v1().volumeAttributesClasses().runnableInformer(0).removeNamespaceIndex();
        classInformer.addEventHandler(handler(this::classSeen, this::classGone, classesListed));
        // by default an informer whose first list fails gives up; at boot the API server may be
        // out of reach, or the RBAC not applied yet: the client logs each failure and backs off
        classInformer.exceptionHandler((started, failure) -> true);
        volumeInformer = client.persistentVolumes().withLimit(LIST_PAGE).runnableInformer(resync.toMillis())
                .removeNamespaceIndex();
        // only this node's volumes of this driver are kept, and of each only what deciding needs: the
        // cluster's other PersistentVolumes pass through a page at a time (DeployedFootprintBenchmark)
        volumeInformer.itemStore(new KeptItemStore<>(new ReducedStateItemStore<>(ReducedStateItemStore.NAME_KEY_STATE,
                PersistentVolume.class, client.getKubernetesSerialization(),
                "spec.csi.driver", "spec.csi.volumeHandle", "spec.volumeAttributesClassName"),
                pv -> ours(pv).isPresent()));
        volumeInformer.addEventHandler(handler(this::volumeSeen, this::volumeGone, volumesListed));
        volumeInformer.exceptionHandler((started, failure) -> true);
        // classes first, so that a volume is not reported as naming a class that is merely not read yet
        classInformer.start().thenRun(this::startVolumes);
        volumesListed.thenRun(() -> log.info("watching the PersistentVolumes of driver {} on node {} and their"
                + " VolumeAttributesClasses", driverName, nodeId));
    }

    private synchronized void startVolumes() {
        if (!closed) {
            volumeInformer.start();
        }
    }

    /** Completes once the first full list of classes and of volumes has been applied. */
    public CompletionStage<Void> synced() {
        return CompletableFuture.allOf(classesListed, volumesListed);
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (volumeInformer != null) {
            volumeInformer.close();
        }
        if (classInformer != null) {
            classInformer.close();
        }
        worker.shutdown();
        try {
            if (!worker.awaitTermination(5, TimeUnit.SECONDS)) {
                worker.shutdownNow();
            }
        } catch (InterruptedException e) {
            worker.shutdownNow();
            Thread.currentThread().interrupt();
        }
        if (ownsClient) {
            client.close();
        }
    }

    /** Whether both watches are established; for tests. */
    synchronized boolean watching() {
        return classInformer != null && classInformer.isWatching() && volumeInformer.isWatching();
    }

    /** The names of the PersistentVolumes the informer holds; for tests. */
    synchronized Set<String> cachedVolumeNames() {
        return Set.copyOf(volumeInformer.getStore().listKeys());
    }

    /** Runs on the worker after everything handed to it so far; for tests. */
    void awaitIdle(Duration timeout) throws Exception {
        worker.submit(() -> { }).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void volumeSeen(PersistentVolume pv) {
        ours(pv).ifPresent(volume -> onWorker(() -> settle(volume.pvName(), reconciler.volumeSeen(volume))));
    }

    private void volumeGone(PersistentVolume pv) {
        String name = pv.getMetadata().getName();
        onWorker(() -> reconciler.volumeGone(name));
    }

    private void classSeen(VolumeAttributesClass vac) {
        AttributesClass attributesClass = new AttributesClass(vac.getMetadata().getName(),
                Objects.requireNonNullElse(vac.getDriverName(), ""),
                Objects.requireNonNullElse(vac.getParameters(), Map.of()));
        onWorker(() -> reconciler.classSeen(attributesClass).forEach(this::settle));
    }

    private void classGone(VolumeAttributesClass vac) {
        String name = vac.getMetadata().getName();
        onWorker(() -> reconciler.classGone(name));
    }

    /** A PersistentVolume of this driver whose volume is on this node; a foreign one is ignored. */
    private Optional<Volume> ours(PersistentVolume pv) {
        PersistentVolumeSpec spec = pv.getSpec();
        if (spec == null || spec.getCsi() == null || !driverName.equals(spec.getCsi().getDriver())) {
            return Optional.empty();
        }
        return VolumeId.parse(VolumeId.Kind.VOLUME, Objects.requireNonNullElse(spec.getCsi().getVolumeHandle(), ""))
                .filter(id -> id.isOn(nodeId))
                .map(id -> new Volume(pv.getMetadata().getName(), id,
                        Optional.ofNullable(spec.getVolumeAttributesClassName()).filter(name -> !name.isEmpty())));
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

    /** Hands events to the worker; the client's threads only translate and enqueue. */
    private <T> ResourceEventHandler<T> handler(Consumer<T> seen, Consumer<T> gone,
                                                CompletableFuture<Void> listed) {
        return new ResourceEventHandler<>() {
            @Override
            public void onAdd(T object) {
                translate(seen, object);
            }

            @Override
            public void onUpdate(T before, T after) {
                translate(seen, after);
            }

            @Override
            public void onDelete(T object, boolean finalStateUnknown) {
                translate(gone, object);
            }

            @Override
            public void onList(String resourceVersion, boolean remainedEmpty) {
                // after the list's own events, in order: the list has been applied when this runs
                onWorker(() -> listed.complete(null));
            }
        };
    }

    private static <T> void translate(Consumer<T> action, T object) {
        try {
            action.accept(object);
        } catch (RuntimeException e) {
            log.warn("could not read {}", object, e);
        }
    }
}
