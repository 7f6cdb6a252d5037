package io.lvmqos.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.VolumeAttributesClass;
import io.fabric8.kubernetes.api.model.storage.VolumeAttributesClassBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.lvmqos.errors.DriverException;
import io.lvmqos.volume.LvmNames;
import io.lvmqos.volume.VolumeId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The watch path against fabric8's mock API server in CRUD mode: it stores what is created and
 * serves lists and watches of it, as an API server does.
 */
@EnableKubernetesMockClient(crud = true)
class VolumeAttributesWatcherTest {

    private static final String DRIVER = "lvmqos.csi.io";
    private static final String NODE = "node-a";
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final Duration WATCH_SETTLE = Duration.ofMillis(250);
    private static final Map<String, String> FAST = Map.of("writeBPS", "200Mi", "readIOPS", "5000");
    private static final Map<String, String> FASTER = Map.of("writeBPS", "400Mi");

    KubernetesClient client;

    private final RecordingModifier modifier = new RecordingModifier();
    private final List<VolumeAttributesWatcher> watchers = new ArrayList<>();

    @AfterEach
    void closeWatchers() throws InterruptedException {
        for (VolumeAttributesWatcher watcher : List.copyOf(watchers)) {
            closeOnceWatching(watcher);
        }
    }

    /**
     * The mock server (Vert.x 5) waits up to 10 s at its stop for every WebSocket to close, and a
     * watch closed within a few milliseconds of opening stays open on its side (about one in five
     * here); so close only once both watches are open and have settled. A plugin never stops that
     * early, and an API server does not wait.
     */
    private void closeOnceWatching(VolumeAttributesWatcher watcher) throws InterruptedException {
        awaitWatching(watcher);
        Thread.sleep(WATCH_SETTLE.toMillis());
        watcher.close();
        watchers.remove(watcher);
    }

    private VolumeAttributesWatcher started() throws Exception {
        return started(Duration.ofMillis(200), VolumeAttributesWatcher.RESYNC);
    }

    private VolumeAttributesWatcher started(Duration retryDelay, Duration resync) throws Exception {
        VolumeAttributesWatcher watcher = VolumeAttributesWatcher.create(DRIVER, NODE, modifier, client, retryDelay,
                resync);
        watchers.add(watcher);
        watcher.start();
        watcher.synced().toCompletableFuture().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        awaitWatching(watcher);
        return watcher;
    }

    /**
     * The mock server, unlike an API server, does not replay from the list's resourceVersion: a
     * watch it opens sends ADDED for what exists then, and nothing of what changed between the
     * list and the watch. A PersistentVolume deleted and made again in that gap reads to the
     * informer as an unchanged update, so a test changes nothing until both watches are open.
     */
    private static void awaitWatching(VolumeAttributesWatcher watcher) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!watcher.watching()) {
            assertTrue(System.nanoTime() < deadline, "the watches were not open within " + WAIT);
            Thread.sleep(10);
        }
    }

    private static VolumeId id(String node, String pvName) {
        return new VolumeId(VolumeId.Kind.VOLUME, node, "lvmqos", LvmNames.volumeLvName(pvName));
    }

    private void createVolume(String name, String driver, String node, String className) {
        PersistentVolume pv = new PersistentVolumeBuilder()
                .withNewMetadata().withName(name).endMetadata()
                .withNewSpec()
                .addToCapacity("storage", new Quantity("1Gi"))
                .withAccessModes("ReadWriteOnce")
                .withNewCsi().withDriver(driver).withVolumeHandle(id(node, name).toString()).endCsi()
                .withVolumeAttributesClassName(className)
                .endSpec()
                .build();
        client.persistentVolumes().resource(pv).create();
    }

    /** What the external-resizer does once ControllerModifyVolume answered OK. */
    private void switchClass(String pvName, String className) {
        client.persistentVolumes().withName(pvName).edit(pv -> new PersistentVolumeBuilder(pv)
                .editSpec().withVolumeAttributesClassName(className).endSpec().build());
    }

    private void createClass(String name, String driver, Map<String, String> parameters) {
        VolumeAttributesClass vac = new VolumeAttributesClassBuilder()
                .withNewMetadata().withName(name).endMetadata()
                .withDriverName(driver)
                .withParameters(parameters)
                .build();
        client.storage().v1().volumeAttributesClasses().resource(vac).create();
    }

    private void assertNothingElseApplied(VolumeAttributesWatcher watcher) throws Exception {
        watcher.awaitIdle(WAIT);
        assertEquals(List.of(), modifier.rest());
    }

    @Test
    void appliesTheClassOfThisNodesVolumesAtStart() throws Exception {
        createClass("fast", DRIVER, FAST);
        createVolume("pv-ours", DRIVER, NODE, "fast");
        createVolume("pv-ours-no-class", DRIVER, NODE, null);
        createVolume("pv-other-node", DRIVER, "node-b", "fast");
        createVolume("pv-other-driver", "other.csi.io", NODE, "fast");
        VolumeAttributesWatcher watcher = started();
        modifier.assertNext(id(NODE, "pv-ours"), FAST, WAIT);
        assertNothingElseApplied(watcher);
    }

    @Test
    void appliesTheNewClassWhenAVolumeSwitchesClass() throws Exception {
        createClass("fast", DRIVER, FAST);
        createClass("faster", DRIVER, FASTER);
        createVolume("pv-1", DRIVER, NODE, "fast");
        VolumeAttributesWatcher watcher = started();
        modifier.assertNext(id(NODE, "pv-1"), FAST, WAIT);
        switchClass("pv-1", "faster");
        modifier.assertNext(id(NODE, "pv-1"), FASTER, WAIT);
        switchClass("pv-1", "fast");
        modifier.assertNext(id(NODE, "pv-1"), FAST, WAIT);
        assertNothingElseApplied(watcher);
    }

    @Test
    void aWatcherStartedAfterTheChangeAppliesItAtStart() throws Exception {
        createClass("fast", DRIVER, FAST);
        createClass("faster", DRIVER, FASTER);
        createVolume("pv-1", DRIVER, NODE, "fast");
        VolumeAttributesWatcher before = started();
        modifier.assertNext(id(NODE, "pv-1"), FAST, WAIT);
        closeOnceWatching(before);
        // the plugin is down; the resizer's call went to another node's plugin, which answered OK
        switchClass("pv-1", "faster");
        VolumeAttributesWatcher after = started();
        modifier.assertNext(id(NODE, "pv-1"), FASTER, WAIT);
        assertNothingElseApplied(after);
    }

    @Test
    void volumesOfOtherNodesAndOtherDriversAreNeverApplied() throws Exception {
        createClass("fast", DRIVER, FAST);
        createClass("faster", DRIVER, FASTER);
        createVolume("pv-other-node", DRIVER, "node-b", null);
        createVolume("pv-other-driver", "other.csi.io", NODE, null);
        createVolume("pv-ours", DRIVER, NODE, null);
        VolumeAttributesWatcher watcher = started();
        switchClass("pv-other-node", "fast");
        switchClass("pv-other-driver", "fast");
        createVolume("pv-other-node-2", DRIVER, "node-b", "faster");
        // events of one watch arrive in order: once this one is applied, the others were seen
        switchClass("pv-ours", "faster");
        modifier.assertNext(id(NODE, "pv-ours"), FASTER, WAIT);
        assertNothingElseApplied(watcher);
    }

    /** What the informer holds grows with this node's volumes, not with the cluster's. */
    @Test
    void onlyThisNodesVolumesOfThisDriverAreHeld() throws Exception {
        createClass("fast", DRIVER, FAST);
        createVolume("pv-ours", DRIVER, NODE, "fast");
        createVolume("pv-other-node", DRIVER, "node-b", "fast");
        createVolume("pv-other-driver", "other.csi.io", NODE, "fast");
        VolumeAttributesWatcher watcher = started();
        modifier.assertNext(id(NODE, "pv-ours"), FAST, WAIT);
        createVolume("pv-ours-later", DRIVER, NODE, null);
        createVolume("pv-other-node-later", DRIVER, "node-b", null);
        switchClass("pv-other-node", "faster");
        client.persistentVolumes().withName("pv-other-driver").delete();
        switchClass("pv-ours-later", "fast");
        modifier.assertNext(id(NODE, "pv-ours-later"), FAST, WAIT);
        assertEquals(Set.of("pv-ours", "pv-ours-later"), watcher.cachedVolumeNames());
        assertNothingElseApplied(watcher);
    }

    @Test
    void invalidParametersAreSkippedAndTheWatcherGoesOn() throws Exception {
        createClass("typo", DRIVER, Map.of("writeBPS", "200 MiB"));
        createClass("unknown-key", DRIVER, Map.of("replicas", "3"));
        createClass("fast", DRIVER, FAST);
        createVolume("pv-1", DRIVER, NODE, "typo");
        createVolume("pv-2", DRIVER, NODE, "unknown-key");
        VolumeAttributesWatcher watcher = started();
        assertNothingElseApplied(watcher);
        switchClass("pv-1", "fast");
        modifier.assertNext(id(NODE, "pv-1"), FAST, WAIT);
        createVolume("pv-3", DRIVER, NODE, "fast");
        modifier.assertNext(id(NODE, "pv-3"), FAST, WAIT);
        assertEquals(2, modifier.calls(), "the refused classes never reached the modifier");
    }

    @Test
    void aClassOfAnotherDriverIsNotApplied() throws Exception {
        createClass("theirs", "other.csi.io", FAST);
        createVolume("pv-1", DRIVER, NODE, "theirs");
        VolumeAttributesWatcher watcher = started();
        assertNothingElseApplied(watcher);
        assertEquals(0, modifier.calls());
    }

    @Test
    void aVolumeProvisionedWhileWatchingWithAClassGetsIt() throws Exception {
        createClass("fast", DRIVER, FAST);
        started();
        createVolume("pv-new", DRIVER, NODE, "fast");
        modifier.assertNext(id(NODE, "pv-new"), FAST, WAIT);
    }

    @Test
    void aClassCreatedAfterTheVolumeNamedItIsAppliedWhenItAppears() throws Exception {
        createVolume("pv-1", DRIVER, NODE, "later");
        VolumeAttributesWatcher watcher = started();
        assertNothingElseApplied(watcher);
        createClass("later", DRIVER, FASTER);
        modifier.assertNext(id(NODE, "pv-1"), FASTER, WAIT);
    }

    @Test
    void aClassRecreatedWithOtherParametersIsAppliedAgain() throws Exception {
        createClass("fast", DRIVER, FAST);
        createVolume("pv-1", DRIVER, NODE, "fast");
        started();
        modifier.assertNext(id(NODE, "pv-1"), FAST, WAIT);
        client.storage().v1().volumeAttributesClasses().withName("fast").delete();
        createClass("fast", DRIVER, FASTER);
        modifier.assertNext(id(NODE, "pv-1"), FASTER, WAIT);
    }

    @Test
    void aFailureThatMayPassIsRetried() throws Exception {
        createClass("fast", DRIVER, FAST);
        createVolume("pv-1", DRIVER, NODE, "fast");
        modifier.failNext(DriverException.unavailable("lvm is busy"));
        started();
        modifier.assertNext(id(NODE, "pv-1"), FAST, WAIT);
        assertEquals(2, modifier.calls());
    }

    /** The resync offers the informer's reduced copies of the PersistentVolumes: they must still read as ours. */
    @Test
    void theResyncRetriesWhatFailed() throws Exception {
        createClass("fast", DRIVER, FAST);
        createVolume("pv-1", DRIVER, NODE, "fast");
        createVolume("pv-other-node", DRIVER, "node-b", "fast");
        modifier.failNext(new IllegalStateException("a bug, but one that passes"));
        VolumeAttributesWatcher watcher = started(Duration.ofHours(1), Duration.ofMillis(300));
        modifier.assertNext(id(NODE, "pv-1"), FAST, WAIT);
        Thread.sleep(1000);
        assertNothingElseApplied(watcher);
        assertEquals(2, modifier.calls(), "applied once more, then left alone at every resync");
    }

    @Test
    void aDeletedVolumeIsForgotten() throws Exception {
        createClass("fast", DRIVER, FAST);
        createVolume("pv-1", DRIVER, NODE, "fast");
        VolumeAttributesWatcher watcher = started();
        modifier.assertNext(id(NODE, "pv-1"), FAST, WAIT);
        client.persistentVolumes().withName("pv-1").delete();
        watcher.awaitIdle(WAIT);
        createVolume("pv-1", DRIVER, NODE, "fast");
        modifier.assertNext(id(NODE, "pv-1"), FAST, WAIT);
    }
}
