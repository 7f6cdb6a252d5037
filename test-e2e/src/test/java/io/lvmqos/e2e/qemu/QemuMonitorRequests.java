package io.lvmqos.e2e.qemu;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * A check inside the qemu node asking qemu itself for something only the host can do, such as
 * throttling a disk harder mid-test ({@code block_set_io_throttle}): the guest writes the monitor
 * command into the run's out directory, which host and guest share, and the host types it on
 * qemu's monitor and answers with a file beside it. The guest's own kernel sees only its effect,
 * the way a node sees a disk that slows down.
 */
public final class QemuMonitorRequests {

    static final String DIR = "qemu-monitor";
    private static final String REQUEST = ".request";
    private static final String DONE = ".done";

    private QemuMonitorRequests() {
    }

    /** In the guest: asks for {@code command} on qemu's human monitor and waits until it was typed. */
    public static void request(Path outDir, String command, Duration timeout) throws IOException, InterruptedException {
        Path dir = Files.createDirectories(outDir.resolve(DIR));
        String name = System.nanoTime() + "";
        Files.writeString(dir.resolve(name + ".tmp"), command, StandardCharsets.UTF_8);
        Files.move(dir.resolve(name + ".tmp"), dir.resolve(name + REQUEST));
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!Files.exists(dir.resolve(name + DONE))) {
            if (System.nanoTime() > deadline) {
                throw new IOException("qemu's monitor did not take '" + command + "' within " + timeout
                        + " (the host polls " + dir + ")");
            }
            TimeUnit.MILLISECONDS.sleep(100);
        }
    }

    /**
     * On the host, while the guest runs: types each request found in the out directory on the
     * monitor (Ctrl-A c switches the muxed console to it and back) and marks it done.
     */
    static Thread serve(Path outDir, Consumer<String> typist) {
        Path dir = outDir.resolve(DIR);
        return Thread.ofPlatform().daemon().name("qemu-monitor-requests").start(() -> {
            try {
                while (!Thread.currentThread().isInterrupted()) {
                    for (Path request : pending(dir)) {
                        String command = Files.readString(request, StandardCharsets.UTF_8).strip();
                        typist.accept("\u0001c" + command + "\n");
                        TimeUnit.MILLISECONDS.sleep(500);
                        typist.accept("\u0001c");
                        String file = request.getFileName().toString();
                        Files.writeString(dir.resolve(file.substring(0, file.length() - REQUEST.length()) + DONE), command);
                        Files.delete(request);
                    }
                    TimeUnit.MILLISECONDS.sleep(200);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (IOException e) {
                System.err.println("qemu monitor requests stopped: " + e);
            }
        });
    }

    private static List<Path> pending(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().endsWith(REQUEST)).sorted().toList();
        }
    }
}
