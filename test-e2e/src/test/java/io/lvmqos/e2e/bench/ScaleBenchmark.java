package io.lvmqos.e2e.bench;

import io.lvmqos.e2e.guest.ScaleBenchCheck;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.UmlGuest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Issue 17: how the node plugin's calls grow with the volumes published on one node (10, 100,
 * 500, each in a pod of its own), in a user-mode-Linux guest with cgroup v2 and thin volumes; see
 * {@link ScaleBenchCheck}. A benchmark: it reports times, it asserts only what must hold at any
 * size (io.max naming each volume's major:minor, limits holding past minor 255, a scrape running
 * no command). Leaves scale.md and scale.dat in target/bench; scripts/plot-scale.sh draws the latter.
 * Run: mvn -pl test-e2e -am verify -Pbench -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=ScaleBenchmark
 */
class ScaleBenchmark {

    @Test
    void publishScrapeAndRestartAsTheNodeGrows() throws Exception {
        UmlGuest.Builder guest = UmlGuest.builder()
                .name("bench-scale")
                // 500 mounted ext4 filesystems, 500 pod cgroups and 100 client threads; the pool holds
                // 500 thin volumes of 16 MiB at over-provisioning ratio 1
                .memory("3072M")
                .disk("12G")
                .volumeGroup("lvmqos", 0)
                .thinPool("lvmqos", "thinpool", "10G")
                .cgroup(CgroupMode.V2)
                // -Dlvmqos.scaleSizes=10 for a quick look at one size; the report is of all three
                .env(ScaleBenchCheck.SIZES_ENV, System.getProperty("lvmqos.scaleSizes", "10,100,500"))
                // 500 creates forked one by one beside the driver's take long on a loaded host
                .timeout(Duration.ofMinutes(Long.getLong("lvmqos.scaleTimeoutMinutes", 60)));
        Path outDir = GuestBench.run(guest, ScaleBenchCheck.class, ScaleBenchCheck.REPORT);
        copyPlotData(outDir);
    }

    private static void copyPlotData(Path outDir) throws IOException {
        Path dir = Path.of(System.getProperty("lvmqos.benchDir", "target/bench"));
        Files.createDirectories(dir);
        Files.copy(outDir.resolve(ScaleBenchCheck.REPORT + ".dat"), dir.resolve(ScaleBenchCheck.REPORT + ".dat"),
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
}
