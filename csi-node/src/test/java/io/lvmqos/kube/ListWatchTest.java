package io.lvmqos.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** One list-and-watch loop against {@link FakeApiServer}: paging, the watch's events, and each way it fails. */
class ListWatchTest {

    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final String PVS = VolumeAttributesWatcher.VOLUMES;

    @TempDir
    Path dir;

    private final FakeApiServer server;
    private final BlockingQueue<String> seen = new LinkedBlockingQueue<>();
    private ListWatch listWatch;

    ListWatchTest() throws IOException {
        server = new FakeApiServer();
    }

    @AfterEach
    void close() {
        if (listWatch != null) {
            listWatch.close();
        }
        server.close();
    }

    private void start(Optional<Path> token, Duration read) throws Exception {
        KubeApi api = new KubeApi(new KubeApi.Config(server.uri(), token, Optional.empty(), Duration.ofSeconds(2),
                read));
        listWatch = new ListWatch(api, PVS, "persistentvolumes", new ListWatch.Handler() {
            @Override
            public void listStarted() {
                seen.add("list");
            }

            @Override
            public void seen(KubeObject object) {
                seen.add("seen " + object.name() + " " + object.className());
            }

            @Override
            public void gone(KubeObject object) {
                seen.add("gone " + object.name());
            }

            @Override
            public void listed() {
                seen.add("listed");
            }
        }, VolumeAttributesWatcherTest.TIMING);
        listWatch.start();
    }

    private void start() throws Exception {
        start(Optional.empty(), Duration.ofSeconds(2));
    }

    private void volume(int i, String className) {
        server.putVolume(String.format("pv-%04d", i), "lvmqos.csi.io", "handle-" + i, className);
    }

    /** The next thing handed on that {@code which} accepts, skipping the rest. */
    private String next(Predicate<String> which) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            String next = seen.poll(10, TimeUnit.MILLISECONDS);
            if (next != null && which.test(next)) {
                return next;
            }
        }
        throw new AssertionError("nothing matching within " + WAIT);
    }

    private void assertNext(String expected) throws InterruptedException {
        assertEquals(expected, seen.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS));
    }

    private long requests(String containing) {
        return server.requests().stream().filter(r -> r.contains(containing)).count();
    }

    private void awaitWatching() throws InterruptedException {
        await(listWatch::watching);
        assertTrue(listWatch.watching(), "no watch within " + WAIT);
    }

    /** Waits until {@code done}, or {@link #WAIT}; the caller asserts what it needs. */
    private static void await(BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!done.getAsBoolean() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
    }

    @Test
    void listsInPagesOf250WithContinueTokens() throws Exception {
        for (int i = 0; i < 600; i++) {
            volume(i, null);
        }
        start();
        assertNext("list");
        for (int i = 0; i < 600; i++) {
            assertNext(String.format("seen pv-%04d ", i));
        }
        assertNext("listed");
        List<String> lists = server.requests().stream().filter(r -> !r.contains("watch=true")).toList();
        assertEquals(3, lists.size(), lists.toString());
        assertTrue(lists.stream().allMatch(r -> r.contains("limit=250")), lists.toString());
        assertEquals(2, lists.stream().filter(r -> r.contains("continue=")).count(), lists.toString());
    }

    @Test
    void anExpiredContinueTokenListsAgainFromTheStart() throws Exception {
        for (int i = 0; i < 300; i++) {
            volume(i, null);
        }
        server.expireNextContinues(1);
        start();
        assertNext("list");
        for (int i = 0; i < 250; i++) {
            assertNext(String.format("seen pv-%04d ", i));
        }
        assertNext("list");
        for (int i = 0; i < 300; i++) {
            assertNext(String.format("seen pv-%04d ", i));
        }
        assertNext("listed");
    }

    @Test
    void watchEventsAreHandedOnInOrderAndBookmarksMoveTheResourceVersion() throws Exception {
        volume(1, null);
        start();
        assertNext("list");
        assertNext("seen pv-0001 ");
        assertNext("listed");
        volume(2, "fast");
        volume(1, "slow");
        server.deleteVolume("pv-0002");
        assertNext("seen pv-0002 fast");
        assertNext("seen pv-0001 slow");
        assertNext("gone pv-0002");
        awaitWatching();
        server.bookmark();
        long watches = requests("watch=true");
        // the server ends each watch after TIMING's 2 s; the next starts from the bookmark's resourceVersion
        await(() -> requests("watch=true") > watches);
        String rewatch = server.requests().getLast();
        assertTrue(rewatch.contains("allowWatchBookmarks=true"), rewatch);
        assertTrue(rewatch.contains("resourceVersion=105&"), "after the bookmark at 105: " + rewatch);
        assertEquals(1, requests("limit="), "a watch ended by the server is opened again without a list");
        volume(3, null);
        assertNext("seen pv-0003 ");
    }

    @Test
    void aWatchEndedWith410GoneListsAgain() throws Exception {
        volume(1, null);
        start();
        next("listed"::equals);
        awaitWatching();
        server.deleteVolumeAndCompact("pv-0001");
        assertNext("list");
        assertNext("listed");
        assertEquals(2, requests("limit="));
    }

    @Test
    void theTokenIsReadAgainAtEveryRequest() throws Exception {
        Path token = Files.writeString(dir.resolve("token"), "first\n");
        server.requireToken("first");
        volume(1, null);
        start(Optional.of(token), Duration.ofSeconds(2));
        next("listed"::equals);
        awaitWatching();
        // kubelet rotates the bound token in place; the server stops accepting the old one
        Files.writeString(token, "second\n");
        server.requireToken("second");
        server.deleteVolumeAndCompact("pv-0001");
        next("listed"::equals);
        assertEquals(0, server.refusedTokens());
    }

    @Test
    void aRefusedTokenIsTriedAgainUntilTheRotatedOneIsThere() throws Exception {
        Path token = Files.writeString(dir.resolve("token"), "old\n");
        server.requireToken("new");
        volume(1, null);
        start(Optional.of(token), Duration.ofSeconds(2));
        await(() -> server.refusedTokens() >= 2);
        assertTrue(server.refusedTokens() >= 2, "refused and tried again");
        Files.writeString(token, "new\n");
        next("listed"::equals);
    }

    @Test
    void aMalformedPageIsRefusedPreciselyAndListedAgain() throws Exception {
        volume(1, null);
        server.nextListBody(PVS, "{\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[{\"metadata\":{\"name\" \"x\"}}]}");
        start();
        assertNext("list");
        assertNext("list");
        assertNext("seen pv-0001 ");
        assertNext("listed");
    }

    @Test
    void aMalformedBodyNamesWhatAndWhere() {
        JsonStream json = new JsonStream(new StringReader("{\"items\":[{\"metadata\":{\"name\" \"x\"}}]}"),
                "the list of persistentvolumes");
        JsonStream.Malformed e = assertThrows(JsonStream.Malformed.class, () -> json.object(member -> {
            if (member.equals("items")) {
                json.array(() -> KubeObject.read(json));
            } else {
                json.skip();
            }
        }));
        assertEquals("the list of persistentvolumes: expected ':' but found '\"' at character 30", e.getMessage());
    }

    @Test
    void aServerThatHangsIsGivenUpOnAndAskedAgain() throws Exception {
        volume(1, null);
        server.hangNext(1);
        start(Optional.empty(), Duration.ofMillis(300));
        next("listed"::equals);
        assertEquals(2, requests("limit="), "the hung list, then the one answered");
    }

    @Test
    void aWatchThatFallsSilentIsOpenedAgain() throws Exception {
        volume(1, null);
        start();
        next("listed"::equals);
        awaitWatching();
        // the next watch hangs before its headers: the read timeout of a watch is its own length plus the slack
        server.hangNext(1);
        long watches = requests("watch=true");
        await(() -> requests("watch=true") >= watches + 2);
        assertTrue(requests("watch=true") >= watches + 2, server.requests().toString());
        volume(2, null);
        assertEquals("seen pv-0002 ", next(s -> s.startsWith("seen")));
    }

    @Test
    void theReaderKeepsOnlyTheFieldsItNeeds() throws IOException {
        JsonStream json = new JsonStream(new StringReader("""
                {"kind":"PersistentVolume","metadata":{"name":"pv-1","resourceVersion":"9","managedFields":[{"f:x":
                {"\\u0041":[1,-2.5e3,true,false,null]}}]},"spec":{"csi":{"driver":"d","volumeHandle":"h","x":{}},
                "volumeAttributesClassName":"c\\"q"},"status":{"phase":"Bound"}}
                """), "a test");
        KubeObject pv = KubeObject.read(json);
        assertEquals(new KubeObject("pv-1", "9", "d", "h", "c\"q", "", Map.of(), 0, "", ""), pv);
    }
}
