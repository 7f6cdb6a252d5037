package io.lvmqos.kube;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An API server of two cluster-scoped kinds in memory, over the API's own protocol on the JDK's
 * HTTP server: lists in pages ({@code limit}, {@code continue}), watches from a resourceVersion
 * as chunked JSON lines (replayed from its event log, then live, with bookmarks on request), 410
 * for a continue token or a watch older than what it keeps, and bearer tokens. Faults are asked
 * for: the next responses malformed, hung, or refused.
 */
final class FakeApiServer implements AutoCloseable {

    private record Event(String type, long resourceVersion, String json) {
    }

    /** One kind's objects (as JSON, by name) and its event log. */
    private final class Kind {
        final TreeMap<String, String> objects = new TreeMap<>();
        final List<Event> events = new ArrayList<>();
        /** Watches from before this resourceVersion, and continue tokens, get 410. */
        long oldest;
        final List<String> nextBodies = new ArrayList<>();
    }

    private final HttpServer server;
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
    private final Object lock = new Object();
    private final Map<String, Kind> kinds = new HashMap<>();
    private long resourceVersion = 100;
    private boolean closed;
    private int expireContinues;
    private int hang;
    private Optional<String> token = Optional.empty();
    private final ConcurrentLinkedQueue<String> requests = new ConcurrentLinkedQueue<>();
    private final AtomicInteger refusedTokens = new AtomicInteger();

    FakeApiServer() throws IOException {
        kinds.put(VolumeAttributesWatcher.VOLUMES, new Kind());
        kinds.put(VolumeAttributesWatcher.CLASSES, new Kind());
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(executor);
        for (String path : kinds.keySet()) {
            server.createContext(path, exchange -> serve(exchange, kinds.get(path)));
        }
        server.start();
    }

    URI uri() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    // --- the cluster ---

    void putVolume(String name, String driver, String handle, String className) {
        String json = "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"" + name
                + "\",\"resourceVersion\":\"%d\",\"annotations\":{\"a\":\"b\"},\"managedFields\":[{\"f:spec\":{}}]},"
                + "\"spec\":{\"capacity\":{\"storage\":\"1Gi\"},\"accessModes\":[\"ReadWriteOnce\"],\"csi\":{"
                + "\"driver\":\"" + driver + "\",\"fsType\":\"ext4\",\"volumeHandle\":\"" + handle + "\"}"
                + (className == null ? "" : ",\"volumeAttributesClassName\":\"" + className + "\"")
                + ",\"persistentVolumeReclaimPolicy\":\"Delete\"},\"status\":{\"phase\":\"Bound\"}}";
        put(VolumeAttributesWatcher.VOLUMES, name, json);
    }

    void putClass(String name, String driver, Map<String, String> parameters) {
        StringBuilder json = new StringBuilder("{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"VolumeAttributesClass\","
                + "\"metadata\":{\"name\":\"" + name + "\",\"resourceVersion\":\"%d\"},\"driverName\":\"" + driver
                + "\",\"parameters\":{");
        String separator = "";
        for (Map.Entry<String, String> parameter : new TreeMap<>(parameters).entrySet()) {
            json.append(separator).append('"').append(parameter.getKey()).append("\":\"").append(parameter.getValue())
                    .append('"');
            separator = ",";
        }
        put(VolumeAttributesWatcher.CLASSES, name, json.append("}}").toString());
    }

    void deleteVolume(String name) {
        delete(VolumeAttributesWatcher.VOLUMES, name);
    }

    void deleteClass(String name) {
        delete(VolumeAttributesWatcher.CLASSES, name);
    }

    /**
     * Deletes a volume and, as a compaction would, forgets the event: watches open now are ended
     * with 410, and only a new list tells the client.
     */
    void deleteVolumeAndCompact(String name) {
        synchronized (lock) {
            if (kinds.get(VolumeAttributesWatcher.VOLUMES).objects.remove(name) == null) {
                throw new IllegalArgumentException("no " + name);
            }
            compact();
        }
    }

    /** Sends every open watch a BOOKMARK at the current resourceVersion. */
    void bookmark() {
        synchronized (lock) {
            long version = ++resourceVersion;
            for (Kind kind : kinds.values()) {
                kind.events.add(new Event("BOOKMARK", version, "{\"kind\":\"PersistentVolume\",\"metadata\":{"
                        + "\"resourceVersion\":\"" + version + "\"}}"));
            }
            lock.notifyAll();
        }
    }

    /** What etcd forgets at compaction: every watch open or opened from before now gets 410. */
    void compact() {
        synchronized (lock) {
            long version = ++resourceVersion;
            for (Kind kind : kinds.values()) {
                kind.oldest = version;
            }
            lock.notifyAll();
        }
    }

    // --- faults ---

    /** The next {@code count} continue tokens are answered 410 Expired. */
    void expireNextContinues(int count) {
        synchronized (lock) {
            expireContinues = count;
        }
    }

    /** The next list of {@code path} answers this body (200) instead. */
    void nextListBody(String path, String body) {
        synchronized (lock) {
            kinds.get(path).nextBodies.add(body);
        }
    }

    /** The next {@code count} requests get no answer until the client gives up. */
    void hangNext(int count) {
        synchronized (lock) {
            hang = count;
        }
    }

    /** From now on only this bearer token is accepted (401 otherwise). */
    void requireToken(String accepted) {
        synchronized (lock) {
            token = Optional.of(accepted);
        }
    }

    int refusedTokens() {
        return refusedTokens.get();
    }

    List<String> requests() {
        return List.copyOf(requests);
    }

    // --- the protocol ---

    private void put(String path, String name, String template) {
        synchronized (lock) {
            Kind kind = kinds.get(path);
            long version = ++resourceVersion;
            String json = template.formatted(version);
            String type = kind.objects.put(name, json) == null ? "ADDED" : "MODIFIED";
            kind.events.add(new Event(type, version, json));
            lock.notifyAll();
        }
    }

    private void delete(String path, String name) {
        synchronized (lock) {
            Kind kind = kinds.get(path);
            String json = kind.objects.remove(name);
            if (json == null) {
                throw new IllegalArgumentException("no " + name);
            }
            long version = ++resourceVersion;
            kind.events.add(new Event("DELETED", version, json.replaceFirst("\"resourceVersion\":\"\\d+\"",
                    "\"resourceVersion\":\"" + version + "\"")));
            lock.notifyAll();
        }
    }

    private void serve(HttpExchange exchange, Kind kind) throws IOException {
        requests.add(exchange.getRequestURI().toString());
        Map<String, String> query = ApiExchange.query(exchange);
        synchronized (lock) {
            if (hang > 0) {
                hang--;
                try {
                    while (!closed) {
                        lock.wait();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                exchange.close();
                return;
            }
            if (token.isPresent() && !("Bearer " + token.get()).equals(
                    exchange.getRequestHeaders().getFirst("Authorization"))) {
                refusedTokens.incrementAndGet();
                status(exchange, 401, "Unauthorized", "Unauthorized");
                return;
            }
        }
        if ("true".equals(query.get("watch"))) {
            watch(exchange, kind, Long.parseLong(query.get("resourceVersion")),
                    Long.parseLong(query.getOrDefault("timeoutSeconds", "60")));
        } else {
            list(exchange, kind, Integer.parseInt(query.getOrDefault("limit", "0")), query.get("continue"));
        }
    }

    private void list(HttpExchange exchange, Kind kind, int limit, String token) throws IOException {
        StringBuilder body = new StringBuilder();
        synchronized (lock) {
            if (!kind.nextBodies.isEmpty()) {
                ApiExchange.answer(exchange, 200, kind.nextBodies.removeFirst());
                return;
            }
            if (token != null && expireContinues > 0) {
                expireContinues--;
                status(exchange, 410, "Expired", "The provided continue parameter is too old");
                return;
            }
            // a continue token names where the list stopped; this server lists what is there now
            List<String> names = new ArrayList<>(kind.objects.keySet());
            int from = token == null ? 0 : names.indexOf(token.substring(token.indexOf(':') + 1)) + 1;
            int to = limit <= 0 ? names.size() : Math.min(names.size(), from + limit);
            body.append("{\"kind\":\"List\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"")
                    .append(resourceVersion).append('"');
            if (to < names.size()) {
                body.append(",\"continue\":\"").append(resourceVersion).append(':').append(names.get(to - 1))
                        .append('"');
            }
            body.append("},\"items\":[");
            for (int i = from; i < to; i++) {
                body.append(i > from ? "," : "").append(kind.objects.get(names.get(i)));
            }
            body.append("]}");
        }
        ApiExchange.answer(exchange, 200, body.toString());
    }

    private void watch(HttpExchange exchange, Kind kind, long since, long timeoutSeconds) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(200, 0);
        long deadline = System.nanoTime() + timeoutSeconds * 1_000_000_000L;
        try (OutputStream out = exchange.getResponseBody()) {
            out.flush();
            int next = 0;
            while (true) {
                List<Event> batch = new ArrayList<>();
                synchronized (lock) {
                    if (since < kind.oldest) {
                        send(out, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
                                + "\"status\":\"Failure\",\"message\":\"too old resource version: " + since
                                + "\",\"reason\":\"Expired\",\"code\":410}}\n");
                        return;
                    }
                    while (next < kind.events.size()) {
                        Event event = kind.events.get(next++);
                        if (event.resourceVersion() > since) {
                            batch.add(event);
                        }
                    }
                    if (batch.isEmpty()) {
                        long left = deadline - System.nanoTime();
                        if (closed || left <= 0) {
                            return;
                        }
                        lock.wait(Math.max(1, left / 1_000_000));
                        continue;
                    }
                }
                for (Event event : batch) {
                    send(out, "{\"type\":\"" + event.type() + "\",\"object\":" + event.json() + "}\n");
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException clientGone) {
            // the watcher closed or reconnects
        }
    }

    private static void send(OutputStream out, String line) throws IOException {
        out.write(line.getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    private static void status(HttpExchange exchange, int code, String reason, String message) throws IOException {
        ApiExchange.answer(exchange, code, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\""
                + message + "\",\"reason\":\"" + reason + "\",\"code\":" + code + "}");
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
}
