package io.lvmqos.e2e.bench;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.lvmqos.kube.ApiExchange;
import io.lvmqos.volume.LvmNames;
import io.lvmqos.volume.Topology;
import io.lvmqos.volume.VolumeId;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A cluster's PersistentVolumes and VolumeAttributesClasses served over the Kubernetes API's own
 * protocol, for measuring what a watching plugin holds and receives: lists in pages
 * ({@code limit}, {@code continue}, the list's {@code resourceVersion}), and watches from a
 * resourceVersion as a stream of JSON events, one per line, over chunked HTTP. A WebSocket
 * upgrade is answered as a proxy without WebSockets answers it, and the client falls back to the
 * HTTP stream; the events' bytes are the same either way, less the framing. It counts the
 * objects and body bytes it sends.
 *
 * <p>The cluster: {@code volumes} PersistentVolumes shaped as the external-provisioner and
 * kube-controller-manager leave them (managed fields, claim reference, node affinity; about 2.4 KB
 * of JSON each), a quarter of them this driver's, spread over {@code nodes} nodes, and
 * {@value #CLASSES} VolumeAttributesClasses, half of them this driver's. Each object's JSON is made
 * when it is sent, so the server holds a few ints per volume, not the objects.
 */
final class SyntheticApiServer implements AutoCloseable {

    static final int CLASSES = 200;
    private static final String PV_PATH = "/api/v1/persistentvolumes";
    private static final String VAC_PATH = "/apis/storage.k8s.io/v1/volumeattributesclasses";
    private static final String OTHER_DRIVER = "ebs.csi.aws.com";

    /** What was sent, by kind and by way (list or watch). */
    record Traffic(long listObjects, long listBytes, long listPages, long watchObjects, long watchBytes) {
        Traffic minus(Traffic before) {
            return new Traffic(listObjects - before.listObjects, listBytes - before.listBytes,
                    listPages - before.listPages, watchObjects - before.watchObjects, watchBytes - before.watchBytes);
        }
    }

    private record Event(long resourceVersion, int volume) {
    }

    private final int volumes;
    private final int nodes;
    private final String driverName;
    private final String volumeGroup;
    private final HttpServer server;
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
    private final Object lock = new Object();
    /** The class each volume names, -1 for none; its resourceVersion. Guarded by lock. */
    private final int[] classOf;
    private final long[] versionOf;
    private final List<Event> events = new ArrayList<>();
    private long resourceVersion;
    private boolean closed;
    private final CompletableFuture<Void> volumeWatchOpened = new CompletableFuture<>();
    private final AtomicLong listObjects = new AtomicLong();
    private final AtomicLong listBytes = new AtomicLong();
    private final AtomicLong listPages = new AtomicLong();
    private final AtomicLong watchObjects = new AtomicLong();
    private final AtomicLong watchBytes = new AtomicLong();
    private final AtomicLong largestLimitAsked = new AtomicLong();
    private final AtomicLong unpagedVolumeLists = new AtomicLong();
    private final long startedNanos = System.nanoTime();
    private final java.util.Queue<String> requests = new java.util.concurrent.ConcurrentLinkedQueue<>();

    private SyntheticApiServer(int volumes, int nodes, String driverName, String volumeGroup) throws IOException {
        this.volumes = volumes;
        this.nodes = nodes;
        this.driverName = driverName;
        this.volumeGroup = volumeGroup;
        this.classOf = new int[volumes];
        this.versionOf = new long[volumes];
        for (int i = 0; i < volumes; i++) {
            // a third name no class; the rest one of their own driver's
            classOf[i] = i % 3 == 0 ? -1 : classFor(i, i);
            versionOf[i] = ++resourceVersion;
        }
        resourceVersion += CLASSES;
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(executor);
        server.createContext(PV_PATH, this::volumes);
        server.createContext(VAC_PATH, this::classes);
        server.createContext("/", exchange -> ApiExchange.answer(exchange, 404, "{\"kind\":\"Status\",\"code\":404}"));
        server.start();
    }

    static SyntheticApiServer start(int volumes, int nodes, String driverName, String volumeGroup) throws IOException {
        return new SyntheticApiServer(volumes, nodes, driverName, volumeGroup);
    }

    URI uri() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    static String nodeName(int node) {
        return String.format("node-%03d", node);
    }

    static boolean isDriversVolume(int volume) {
        return volume % 4 == 0;
    }

    int nodeOf(int volume) {
        return (isDriversVolume(volume) ? volume / 4 : volume) % nodes;
    }

    /** How many volumes of the driver the named node holds. */
    long volumesOn(int node) {
        long count = 0;
        for (int i = 0; i < volumes; i++) {
            if (isDriversVolume(i) && nodeOf(i) == node) {
                count++;
            }
        }
        return count;
    }

    /** Even classes are the driver's, odd ones another's; a volume names one of its own driver's. */
    private static int classFor(int volume, int seed) {
        return 2 * Math.floorMod(seed, CLASSES / 2) + (isDriversVolume(volume) ? 0 : 1);
    }

    CompletableFuture<Void> volumeWatchOpened() {
        return volumeWatchOpened;
    }

    Traffic traffic() {
        return new Traffic(listObjects.get(), listBytes.get(), listPages.get(), watchObjects.get(), watchBytes.get());
    }

    /** The largest page any list of PersistentVolumes asked for, and how many asked for no limit at all. */
    long largestLimitAsked() {
        return largestLimitAsked.get();
    }

    long unpagedVolumeLists() {
        return unpagedVolumeLists.get();
    }

    /** Switches the class of {@code count} random volumes, each a MODIFIED event for every watch. */
    void modify(int count, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        synchronized (lock) {
            for (int n = 0; n < count; n++) {
                int volume = random.nextInt(volumes);
                classOf[volume] = classFor(volume, random.nextInt());
                versionOf[volume] = ++resourceVersion;
                events.add(new Event(resourceVersion, volume));
            }
            lock.notifyAll();
        }
    }

    /** How many events the watch of PersistentVolumes has written so far. */
    long volumeEventsSent() {
        return watchObjects.get();
    }

    /** Each request with its time since the server started, for the report's appendix. */
    String requestLog() {
        return String.join("\n", requests);
    }

    private void logRequest(HttpExchange exchange) {
        requests.add(String.format("%8.3f s %s %s%s", (System.nanoTime() - startedNanos) / 1e9,
                exchange.getRequestMethod(), exchange.getRequestURI(),
                exchange.getRequestHeaders().containsKey("Upgrade")
                        ? " (Upgrade: " + exchange.getRequestHeaders().getFirst("Upgrade") + ")" : ""));
    }

    private void volumes(HttpExchange exchange) throws IOException {
        logRequest(exchange);
        Map<String, String> query = ApiExchange.query(exchange);
        if (upgradeRefused(exchange)) {
            return;
        }
        if ("true".equals(query.get("watch"))) {
            volumeWatchOpened.complete(null);
            watchVolumes(exchange, Long.parseLong(query.getOrDefault("resourceVersion", "0")));
            return;
        }
        long limit = Long.parseLong(query.getOrDefault("limit", "0"));
        if (limit <= 0) {
            unpagedVolumeLists.incrementAndGet();
            limit = volumes;
        }
        largestLimitAsked.accumulateAndGet(limit, Math::max);
        int from = 0;
        long listVersion;
        synchronized (lock) {
            listVersion = resourceVersion;
        }
        String token = query.get("continue");
        if (token != null) {
            String[] parts = token.split(":");
            listVersion = Long.parseLong(parts[0]);
            from = Integer.parseInt(parts[1]);
        }
        int to = (int) Math.min(volumes, from + limit);
        StringBuilder body = new StringBuilder(4096 * (to - from) + 256);
        body.append("{\"kind\":\"PersistentVolumeList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"")
                .append(listVersion).append('"');
        if (to < volumes) {
            body.append(",\"continue\":\"").append(listVersion).append(':').append(to)
                    .append("\",\"remainingItemCount\":").append(volumes - to);
        }
        body.append("},\"items\":[");
        synchronized (lock) {
            for (int i = from; i < to; i++) {
                if (i > from) {
                    body.append(',');
                }
                appendVolume(body, i);
            }
        }
        body.append("]}");
        listObjects.addAndGet(to - from);
        listPages.incrementAndGet();
        listBytes.addAndGet(ApiExchange.answer(exchange, 200, body.toString()));
    }

    private void classes(HttpExchange exchange) throws IOException {
        logRequest(exchange);
        Map<String, String> query = ApiExchange.query(exchange);
        if (upgradeRefused(exchange)) {
            return;
        }
        if ("true".equals(query.get("watch"))) {
            // no class changes in this cluster: the watch stays open and quiet until the end
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, 0);
            try (OutputStream out = exchange.getResponseBody()) {
                out.flush();
                synchronized (lock) {
                    while (!closed) {
                        lock.wait();
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (IOException clientGone) {
                // the plugin stopped
            }
            return;
        }
        StringBuilder body = new StringBuilder(512 * CLASSES);
        body.append("{\"kind\":\"VolumeAttributesClassList\",\"apiVersion\":\"storage.k8s.io/v1\",\"metadata\":")
                .append("{\"resourceVersion\":\"").append(volumes + CLASSES).append("\"},\"items\":[");
        for (int k = 0; k < CLASSES; k++) {
            if (k > 0) {
                body.append(',');
            }
            boolean drivers = k % 2 == 0;
            body.append("{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"VolumeAttributesClass\",\"metadata\":{")
                    .append("\"creationTimestamp\":\"2026-12-01T09:00:00Z\",\"name\":\"").append(className(k))
                    .append("\",\"resourceVersion\":\"").append(volumes + k + 1).append("\",\"uid\":\"")
                    .append(UUID.nameUUIDFromBytes(("class-" + k).getBytes(StandardCharsets.UTF_8)))
                    .append("\"},\"driverName\":\"").append(drivers ? driverName : OTHER_DRIVER)
                    .append("\",\"parameters\":");
            if (drivers) {
                body.append("{\"writeBPS\":\"").append(10 + k).append("Mi\",\"readIOPS\":\"").append(100 * (k + 1))
                        .append("\"}}");
            } else {
                body.append("{\"iops\":\"").append(3000 + k).append("\",\"throughput\":\"").append(125 + k)
                        .append("\"}}");
            }
        }
        body.append("]}");
        listObjects.addAndGet(CLASSES);
        listPages.incrementAndGet();
        listBytes.addAndGet(ApiExchange.answer(exchange, 200, body.toString()));
    }

    private static String className(int k) {
        return (k % 2 == 0 ? "lvmqos-" : "ebs-") + k;
    }

    private void watchVolumes(HttpExchange exchange, long since) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(200, 0);
        CountingStream out = new CountingStream(exchange.getResponseBody());
        try (out) {
            out.flush();
            int next;
            synchronized (lock) {
                next = 0;
                while (next < events.size() && events.get(next).resourceVersion() <= since) {
                    next++;
                }
            }
            StringBuilder line = new StringBuilder(4096);
            while (true) {
                List<Event> batch;
                synchronized (lock) {
                    while (next >= events.size() && !closed) {
                        lock.wait();
                    }
                    if (closed) {
                        return;
                    }
                    batch = List.copyOf(events.subList(next, events.size()));
                    next = events.size();
                }
                for (Event event : batch) {
                    line.setLength(0);
                    line.append("{\"type\":\"MODIFIED\",\"object\":");
                    synchronized (lock) {
                        appendVolume(line, event.volume());
                    }
                    line.append("}\n");
                    long before = out.count;
                    out.write(line.toString().getBytes(StandardCharsets.UTF_8));
                    watchBytes.addAndGet(out.count - before);
                    watchObjects.incrementAndGet();
                }
                out.flush();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException clientGone) {
            // the plugin stopped or reconnects
        }
    }

    /** One PersistentVolume as the API server sends it; called holding the lock. */
    private void appendVolume(StringBuilder out, int i) {
        boolean drivers = isDriversVolume(i);
        String name = "pvc-" + UUID.nameUUIDFromBytes(("pv-" + i).getBytes(StandardCharsets.UTF_8));
        String node = nodeName(nodeOf(i));
        String driver = drivers ? driverName : OTHER_DRIVER;
        String handle = drivers ? VolumeId.issue(VolumeId.Kind.VOLUME, node, volumeGroup, LvmNames.volumeLvName(name))
                .toString() : "vol-" + String.format("%017x", (long) i * 2654435761L);
        String topologyKey = drivers ? Topology.NODE_KEY : "topology.ebs.csi.aws.com/zone";
        String topologyValue = drivers ? node : "zone-" + (i % 3);
        out.append("{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"annotations\":{")
                .append("\"pv.kubernetes.io/provisioned-by\":\"").append(driver).append("\",")
                .append("\"volume.kubernetes.io/provisioner-deletion-secret-name\":\"\",")
                .append("\"volume.kubernetes.io/provisioner-deletion-secret-namespace\":\"\"},")
                .append("\"creationTimestamp\":\"2026-12-01T10:00:00Z\",")
                .append("\"finalizers\":[\"external-provisioner.volume.kubernetes.io/finalizer\",")
                .append("\"kubernetes.io/pv-protection\"],\"managedFields\":[{\"apiVersion\":\"v1\",")
                .append("\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{\"f:annotations\":{\".\":{},")
                .append("\"f:pv.kubernetes.io/provisioned-by\":{},")
                .append("\"f:volume.kubernetes.io/provisioner-deletion-secret-name\":{},")
                .append("\"f:volume.kubernetes.io/provisioner-deletion-secret-namespace\":{}},\"f:finalizers\":{")
                .append("\"v:\\\"external-provisioner.volume.kubernetes.io/finalizer\\\"\":{}}},\"f:spec\":{")
                .append("\"f:accessModes\":{},\"f:capacity\":{\".\":{},\"f:storage\":{}},\"f:claimRef\":{\".\":{},")
                .append("\"f:apiVersion\":{},\"f:kind\":{},\"f:name\":{},\"f:namespace\":{},\"f:resourceVersion\":{},")
                .append("\"f:uid\":{}},\"f:csi\":{\".\":{},\"f:driver\":{},\"f:fsType\":{},\"f:volumeAttributes\":{")
                .append("\".\":{},\"f:storage.kubernetes.io/csiProvisionerIdentity\":{}},\"f:volumeHandle\":{}},")
                .append("\"f:nodeAffinity\":{\".\":{},\"f:required\":{}},\"f:persistentVolumeReclaimPolicy\":{},")
                .append("\"f:storageClassName\":{},\"f:volumeMode\":{}}},\"manager\":\"csi-provisioner\",")
                .append("\"operation\":\"Update\",\"time\":\"2026-12-01T10:00:00Z\"},{\"apiVersion\":\"v1\",")
                .append("\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:status\":{\"f:phase\":{}}},")
                .append("\"manager\":\"kube-controller-manager\",\"operation\":\"Update\",\"subresource\":\"status\",")
                .append("\"time\":\"2026-12-01T10:00:01Z\"}],\"name\":\"").append(name)
                .append("\",\"resourceVersion\":\"").append(versionOf[i]).append("\",\"uid\":\"")
                .append(UUID.nameUUIDFromBytes(("pv-uid-" + i).getBytes(StandardCharsets.UTF_8)))
                .append("\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"capacity\":{\"storage\":\"10Gi\"},")
                .append("\"claimRef\":{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"name\":\"data-")
                .append(i).append("\",\"namespace\":\"team-").append(i % 50).append("\",\"resourceVersion\":\"")
                .append(i + 7).append("\",\"uid\":\"")
                .append(UUID.nameUUIDFromBytes(("pvc-uid-" + i).getBytes(StandardCharsets.UTF_8)))
                .append("\"},\"csi\":{\"driver\":\"").append(driver).append("\",\"fsType\":\"ext4\",")
                .append("\"volumeAttributes\":{\"storage.kubernetes.io/csiProvisionerIdentity\":\"1764583200000-")
                .append(nodeOf(i)).append('-').append(driver).append("\"},\"volumeHandle\":\"").append(handle)
                .append("\"},\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[{\"matchExpressions\":[{")
                .append("\"key\":\"").append(topologyKey).append("\",\"operator\":\"In\",\"values\":[\"")
                .append(topologyValue).append("\"]}]}]}},\"persistentVolumeReclaimPolicy\":\"Delete\",")
                .append("\"storageClassName\":\"").append(drivers ? "lvmqos-silver" : "gp3").append('"');
        if (classOf[i] >= 0) {
            out.append(",\"volumeAttributesClassName\":\"").append(className(classOf[i])).append('"');
        }
        out.append(",\"volumeMode\":\"Filesystem\"},\"status\":{")
                .append("\"lastPhaseTransitionTime\":\"2026-12-01T10:00:01Z\",\"phase\":\"Bound\"}}");
    }

    /** A WebSocket handshake (not the HTTP/2 upgrade a client may offer beside it) is refused. */
    private static boolean upgradeRefused(HttpExchange exchange) throws IOException {
        String upgrade = exchange.getRequestHeaders().getFirst("Upgrade");
        if (upgrade != null && upgrade.equalsIgnoreCase("websocket")) {
            // 200 rather than 101, as kubectl proxy answers: a client that tries WebSockets first then
            // watches over HTTP at once (the driver's own client never asks for an upgrade)
            ApiExchange.answer(exchange, 200, "{\"kind\":\"Status\",\"code\":200}");
            return true;
        }
        return false;
    }



    @Override
    public void close() {
        synchronized (lock) {
            closed = true;
            lock.notifyAll();
        }
        server.stop(0);
        executor.shutdownNow();
    }

    private static final class CountingStream extends FilterOutputStream {
        long count;

        CountingStream(OutputStream out) {
            super(out);
        }

        @Override
        public void write(byte[] bytes, int offset, int length) throws IOException {
            out.write(bytes, offset, length);
            count += length;
        }

        @Override
        public void write(int b) throws IOException {
            out.write(b);
            count++;
        }
    }
}
