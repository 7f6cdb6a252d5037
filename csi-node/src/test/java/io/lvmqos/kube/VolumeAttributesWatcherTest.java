package io.lvmqos.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lvmqos.errors.DriverException;
import io.lvmqos.volume.LvmNames;
import io.lvmqos.volume.VolumeId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The watch path against {@link FakeApiServer}, which stores what is created and serves lists
 * and watches of it as an API server does.
 */
class VolumeAttributesWatcherTest {

    private static final String DRIVER = "lvmqos.csi.io";
    private static final String NODE = "node-a";
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final Map<String, String> FAST = Map.of("writeBPS", "200Mi", "readIOPS", "5000");
    private static final Map<String, String> FASTER = Map.of("writeBPS", "400Mi");
    static final ListWatch.Timing TIMING = new ListWatch.Timing(Duration.ofMillis(50), Duration.ofMillis(200),
            Duration.ofSeconds(2), Duration.ofSeconds(2));

    private final FakeApiServer server;
    private final RecordingModifier modifier = new RecordingModifier();
    private final List<VolumeAttributesWatcher> watchers = new ArrayList<>();

    VolumeAttributesWatcherTest() throws Exception {
        server = new FakeApiServer();
    }

    @AfterEach
    void closeAll() {
        watchers.forEach(VolumeAttributesWatcher::close);
        server.close();
    }

    static KubeApi api(FakeApiServer server) throws Exception {
        return new KubeApi(new KubeApi.Config(server.uri(), Optional.empty(), Optional.empty(), Duration.ofSeconds(2),
                Duration.ofSeconds(2)));
    }

    private VolumeAttributesWatcher started() throws Exception {
        return started(Duration.ofMillis(200), VolumeAttributesWatcher.RESYNC);
    }

    private VolumeAttributesWatcher started(Duration retryDelay, Duration resync) throws Exception {
        VolumeAttributesWatcher watcher = new VolumeAttributesWatcher(DRIVER, NODE, modifier, api(server), TIMING,
                retryDelay, resync);
        watchers.add(watcher);
        watcher.start();
        watcher.synced().toCompletableFuture().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        return watcher;
    }

    private static VolumeId id(String node, String pvName) {
        return new VolumeId(VolumeId.Kind.VOLUME, node, "lvmqos", LvmNames.volumeLvName(pvName));
    }

    /** A volume's driver and node, kept so that a class switch rewrites the same PersistentVolume. */
    private final Map<String, String[]> volumes = new java.util.HashMap<>();

    private void createVolume(String name, String driver, String node, String className) {
        volumes.put(name, new String[] {driver, node});
        server.putVolume(name, driver, id(node, name).toString(), className);
    }

    /** What the external-resizer does once ControllerModifyVolume answered OK. */
    private void switchClass(String pvName, String className) {
        String[] volume = volumes.get(pvName);
        server.putVolume(pvName, volume[0], id(volume[1], pvName).toString(), className);
    }

    private void createClass(String name, String driver, Map<String, String> parameters) {
        server.putClass(name, driver, parameters);
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
        before.close();
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

    /** What the watcher holds grows with this node's volumes, not with the cluster's. */
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
        server.deleteVolume("pv-other-driver");
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
        server.deleteClass("fast");
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

    /** The resync offers the kept PersistentVolumes again: they must still read as ours. */
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
        server.deleteVolume("pv-1");
        watcher.awaitIdle(WAIT);
        createVolume("pv-1", DRIVER, NODE, "fast");
        modifier.assertNext(id(NODE, "pv-1"), FAST, WAIT);
    }

    /** A volume deleted while no watch was open is dropped at the list that follows (410 Gone here). */
    @Test
    void aVolumeDeletedWhileTheWatchWasGoneIsForgottenAtTheRelist() throws Exception {
        createClass("fast", DRIVER, FAST);
        createVolume("pv-1", DRIVER, NODE, "fast");
        createVolume("pv-2", DRIVER, NODE, null);
        VolumeAttributesWatcher watcher = started();
        modifier.assertNext(id(NODE, "pv-1"), FAST, WAIT);
        // no DELETED event: the watches end with 410, and only the list that follows can tell
        server.deleteVolumeAndCompact("pv-2");
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!watcher.cachedVolumeNames().equals(Set.of("pv-1")) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertEquals(Set.of("pv-1"), watcher.cachedVolumeNames());
        assertNothingElseApplied(watcher);
    }
}
