package io.lvmqos.kube;

import java.io.IOException;
import java.net.Socket;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lists one kind of cluster-scoped object a page at a time, then watches it from the list's
 * resourceVersion, on a thread of its own, until closed: what an informer does, without its
 * cache. Each object is handed on as it is read, so that a page is never held whole and a watch
 * holds one event. A watch the server ends is opened again from the last resourceVersion seen
 * (bookmarks move it on while nothing changes); 410 Gone on a watch, or Expired on a page's
 * continue token, lists again from the start. Any other failure (no server, a refusal, a
 * malformed body, a server that stops answering) is logged and tried again after a back-off that
 * doubles up to a cap.
 */
final class ListWatch implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ListWatch.class);

    /** Pages of this many objects: a page of PersistentVolumes is some 600 KB on the wire, and is never held. */
    static final int PAGE = 250;

    /** What is done with what is read; runs on the list-watch thread, so it must only hand things on. */
    interface Handler {
        /** A list begins; what the last list handed on may be gone unless this one hands it on again. */
        void listStarted();

        /** Listed, added or modified. */
        void seen(KubeObject object);

        void gone(KubeObject object);

        /** Every object of the list has been handed on. */
        void listed();
    }

    /**
     * @param backoff the first wait after a failure, doubled up to {@code maxBackoff}
     * @param watch the server ends a watch after between this and twice this (as client-go asks)
     * @param watchSlack how much longer than that the client waits in silence before it gives up on the server
     */
    record Timing(Duration backoff, Duration maxBackoff, Duration watch, Duration watchSlack) {
        static final Timing DEFAULT = new Timing(Duration.ofSeconds(1), Duration.ofSeconds(30), Duration.ofMinutes(5),
                Duration.ofSeconds(30));

        Timing {
            Objects.requireNonNull(backoff);
            Objects.requireNonNull(maxBackoff);
            Objects.requireNonNull(watch);
            Objects.requireNonNull(watchSlack);
        }
    }

    /** The list must start again: its resourceVersion is older than the server keeps. */
    private static final class Gone extends Exception {
        Gone(String message) {
            super(message, null, false, false);
        }
    }

    private final KubeApi api;
    private final String path;
    private final String what;
    private final Handler handler;
    private final Timing timing;
    private final Thread thread;
    private volatile boolean closed;
    private volatile boolean watching;
    private volatile Socket connection;

    /** @param path the collection's path, {@code /api/v1/persistentvolumes} say */
    ListWatch(KubeApi api, String path, String what, Handler handler, Timing timing) {
        this.api = Objects.requireNonNull(api);
        this.path = Objects.requireNonNull(path);
        this.what = Objects.requireNonNull(what);
        this.handler = Objects.requireNonNull(handler);
        this.timing = Objects.requireNonNull(timing);
        this.thread = Thread.ofPlatform().daemon().name("kube-" + what).unstarted(this::run);
    }

    void start() {
        thread.start();
    }

    /** Whether a watch is open; for tests. */
    boolean watching() {
        return watching;
    }

    @Override
    public void close() {
        closed = true;
        thread.interrupt();
        Socket open = connection;
        if (open != null) {
            try {
                open.close();
            } catch (IOException ignored) {
                // it is being dropped
            }
        }
        try {
            thread.join(Duration.ofSeconds(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void run() {
        String resourceVersion = null;
        Duration backoff = timing.backoff();
        while (!closed) {
            try {
                if (resourceVersion == null) {
                    resourceVersion = list();
                }
                long opened = System.nanoTime();
                resourceVersion = watch(resourceVersion);
                if (Duration.ofNanos(System.nanoTime() - opened).compareTo(Duration.ofSeconds(1)) >= 0) {
                    backoff = timing.backoff();
                    continue;
                }
                // a watch the server ends at once, again and again, must not turn into a busy loop
                throw new IOException("the watch of " + what + " ended as soon as it opened");
            } catch (Gone e) {
                log.info("{}: {}; listing again", what, e.getMessage());
                resourceVersion = null;
            } catch (IOException | RuntimeException e) {
                if (closed) {
                    return;
                }
                log.warn("{}: {}; trying again in {} ms", what, describe(e), backoff.toMillis());
                try {
                    Thread.sleep(backoff);
                } catch (InterruptedException interrupted) {
                    return;
                }
                backoff = backoff.multipliedBy(2).compareTo(timing.maxBackoff()) > 0 ? timing.maxBackoff()
                        : backoff.multipliedBy(2);
            }
        }
    }

    private static String describe(Exception e) {
        return e instanceof JsonStream.Malformed || e instanceof KubeApi.Refused ? e.getMessage() : e.toString();
    }

    /** Lists everything a page at a time; the list's resourceVersion. */
    private String list() throws IOException {
        handler.listStarted();
        String resourceVersion = "";
        String[] page = {"", ""}; // resourceVersion, continue
        String token = "";
        while (true) {
            String query = path + "?limit=" + PAGE + (token.isEmpty() ? "" : "&continue=" + encode(token));
            try (KubeApi.Body body = api.get(query, api.config().read(), this::opened)) {
                page[0] = "";
                page[1] = "";
                JsonStream json = body.json("the list of " + what);
                json.object(member -> {
                    switch (member) {
                        case "metadata" -> json.object(field -> {
                            switch (field) {
                                case "resourceVersion" -> page[0] = json.string();
                                case "continue" -> page[1] = json.string();
                                default -> json.skip();
                            }
                        });
                        case "items" -> json.array(() -> handler.seen(KubeObject.read(json)));
                        default -> json.skip();
                    }
                });
                if (json.more()) {
                    throw json.error("text after the end of the list");
                }
            } catch (KubeApi.Refused e) {
                if (e.code() == 410 && !token.isEmpty()) {
                    // the continue token outlived what etcd keeps (about 5 minutes): a fresh list
                    log.info("{}: the list's continue token expired ({}); listing again from the start", what,
                            e.getMessage());
                    token = "";
                    handler.listStarted();
                    continue;
                }
                throw e;
            }
            if (page[0].isEmpty()) {
                throw new IOException("the list of " + what + " has no resourceVersion");
            }
            resourceVersion = page[0];
            token = page[1];
            if (token.isEmpty()) {
                break;
            }
            if (closed) {
                throw new IOException("closed");
            }
        }
        handler.listed();
        return resourceVersion;
    }

    /** Watches from {@code resourceVersion} until the server ends the watch; the last resourceVersion seen. */
    private String watch(String resourceVersion) throws IOException, Gone {
        long seconds = timing.watch().toSeconds()
                + ThreadLocalRandom.current().nextLong(Math.max(1, timing.watch().toSeconds()));
        Duration silence = Duration.ofSeconds(seconds).plus(timing.watchSlack());
        String query = path + "?watch=true&allowWatchBookmarks=true&resourceVersion=" + encode(resourceVersion)
                + "&timeoutSeconds=" + seconds;
        String last = resourceVersion;
        try (KubeApi.Body body = api.get(query, silence, this::opened)) {
            watching = true;
            JsonStream json = body.json("the watch of " + what);
            String[] type = {""};
            KubeObject[] object = {null};
            while (json.more()) {
                type[0] = "";
                object[0] = null;
                json.object(member -> {
                    switch (member) {
                        case "type" -> type[0] = json.string();
                        case "object" -> object[0] = KubeObject.read(json);
                        default -> json.skip();
                    }
                });
                if (object[0] == null) {
                    throw json.error("a watch event without an object");
                }
                KubeObject event = object[0];
                switch (type[0]) {
                    case "ADDED", "MODIFIED" -> handler.seen(event);
                    case "DELETED" -> handler.gone(event);
                    case "BOOKMARK" -> { }
                    case "ERROR" -> {
                        if (event.code() == 410) {
                            throw new Gone("the watch's resourceVersion " + last + " is too old (" + event.reason()
                                    + ")");
                        }
                        throw new IOException("the watch ended with an error: " + event.code() + " " + event.reason()
                                + " " + event.message());
                    }
                    default -> throw json.error("a watch event of unknown type \"" + type[0] + "\"");
                }
                if (!event.resourceVersion().isEmpty()) {
                    last = event.resourceVersion();
                }
            }
            return last;
        } catch (KubeApi.Refused e) {
            if (e.code() == 410) {
                throw new Gone("the watch's resourceVersion " + last + " is too old (" + e.getMessage() + ")");
            }
            throw e;
        } finally {
            watching = false;
        }
    }

    private void opened(Socket socket) {
        connection = socket;
        if (closed) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing is the point
            }
        }
    }

    private static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }
}
