package io.lvmqos.e2e.demo;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/** The closing lines of ./demo, successful or not: where its run directory is and what each log in it holds. */
final class DemoRunFiles {

    /** ./demo's own: the package installation's, Maven's and scripts/build-image's output. */
    static final String BUILD_LOG = "build.log";

    private DemoRunFiles() {
    }

    /** The run directory, then one line per log found in it, in the order a reader needs them. */
    static List<String> describe(Path runDir) {
        List<String> lines = new ArrayList<>();
        lines.add("run directory: " + runDir);
        line(lines, runDir, BUILD_LOG, "package installation, Maven and scripts/build-image");
        line(lines, runDir, "console.log", "the node's console: its boot, and why it stopped if it did");
        line(lines, runDir, "out/payload.log", "what the demo printed in the node (the steps above)");
        line(lines, runDir, "out/demo-failure.txt", "the stack trace of the demo's failure");
        for (Path log : files(runDir.resolve("out"), "driver-", ".log")) {
            line(lines, runDir, "out/" + log.getFileName(), "the driver's log: one line per CSI call");
        }
        line(lines, runDir, "out/containerd.log", "containerd's log (the first pod's runtime)");
        List<Path> reports = files(runDir.resolve("out"), "fio-", ".json");
        if (!reports.isEmpty()) {
            lines.add(String.format(Locale.ROOT, "  %-28s %s", "out/fio-*.json",
                    "fio's reports, one per run (" + reports.size() + ")"));
        }
        return lines;
    }

    private static void line(List<String> lines, Path runDir, String file, String what) {
        if (Files.exists(runDir.resolve(file))) {
            lines.add(String.format(Locale.ROOT, "  %-28s %s", file, what));
        }
    }

    private static List<Path> files(Path dir, String prefix, String suffix) {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().startsWith(prefix)
                    && f.getFileName().toString().endsWith(suffix)).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
