package io.lvmqos.e2e.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DemoRunFilesTest {

    @Test
    void namesEachLogThatIsThereAndWhatItHolds(@TempDir Path run) throws IOException {
        Files.createDirectories(run.resolve("out"));
        for (String file : List.of("build.log", "console.log", "out/payload.log", "out/driver-4242.log",
                "out/containerd.log", "out/fio-data-bps-seq_write.json", "out/fio-data-bps-seq_read.json")) {
            Files.writeString(run.resolve(file), "x");
        }
        List<String> lines = DemoRunFiles.describe(run);
        assertEquals("run directory: " + run, lines.getFirst());
        assertEquals(List.of("build.log", "console.log", "out/payload.log", "out/driver-4242.log",
                "out/containerd.log", "out/fio-*.json"), lines.stream().skip(1).map(l -> l.strip().split(" +")[0]).toList());
        assertEquals("  out/fio-*.json               fio's reports, one per run (2)", lines.getLast());
    }

    @Test
    void aRunThatStoppedEarlyShowsWhatItLeft(@TempDir Path run) throws IOException {
        Files.writeString(run.resolve("build.log"), "x");
        assertEquals(List.of("run directory: " + run,
                "  build.log                    package installation, Maven and scripts/build-image"),
                DemoRunFiles.describe(run));
    }
}
