package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.e2e.guest.GuestPods.QosClass;
import io.lvmqos.e2e.guest.IoCostPods.Published;
import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import io.lvmqos.guarantee.CostModel;
import io.lvmqos.volume.DiskCapacity;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Weights and floors on disks unlike a constant, with only the models {@code lvmqos calibrate}
 * measured there: one volume group per disk of the qemu node, each disk throttled by qemu in its
 * own shape (DiskShapesIT says which). Every volume is linear, published raw into a pod of its own.
 * Figures go to the run's out dir as disk-shapes.txt.
 */
public class DiskShapesCheck {

    private static final int FIO_SECONDS = 20;
    /** The driver's default QoS pins io.cost's vrate here. */
    private static final int VRATE = 95;
    /** What the weights ask (800:100) and how far the measured ratio may be from it. */
    private static final double RATIO = 8;
    private static final double RATIO_TOLERANCE = 0.15;
    /** A floor is held when the floored pod gets at least this share of it. */
    private static final double FLOOR_HELD = 0.9;

    @RegisterExtension
    static final DriverForTheClass driver = DriverForTheClass.withGuestArgs(() -> {
        List<String> args = new ArrayList<>();
        for (String group : GuestEnv.volumeGroups()) {
            args.addAll(List.of("--io-cost", group));
        }
        return args;
    }).startedBySetUp();
    private static final Map<String, CostModel> models = new LinkedHashMap<>();
    private static final List<String> report = new ArrayList<>();
    private final List<Published> published = new ArrayList<>();

    static List<String> groups() {
        return GuestEnv.inGuest() ? GuestEnv.volumeGroups() : List.of("none");
    }

    @BeforeAll
    static void calibrateEveryDisk() throws Exception {
        GuestEnv.assumeInGuest();
        Files.createDirectories(GuestEnv.cgroupRoot().resolve("system.slice"));
        for (String group : GuestEnv.volumeGroups()) {
            // 8 s a workload: a burst allowance of a few seconds is spent in the first half
            GuestCommand.Result calibration = IoCostPods.calibrate("--volume-group", group, "--size", "512Mi",
                    "--seconds", "8");
            note("lvmqos calibrate --volume-group %s:%n%s", group, calibration.stdout().strip());
            assertEquals(0, calibration.exitCode(), calibration.stdout() + calibration.stderr());
            String line = calibration.stdout().lines().filter(l -> l.contains(" ctrl=user model=linear ")).findFirst()
                    .orElseThrow();
            models.put(group, CostModel.fromSettings(CostModel.settingsOf(line.substring(line.indexOf(' ') + 1)))
                    .orElseThrow());
        }
        driver.start();
    }

    @AfterEach
    void tearDown() {
        IoCostPods.removeAll(driver.client(), published);
    }

    @AfterAll
    static void writeReport() throws Exception {
        if (GuestEnv.inGuest()) {
            Files.write(GuestEnv.outDir().resolve("disk-shapes.txt"), report, StandardCharsets.UTF_8);
        }
    }

    @ParameterizedTest
    @MethodSource("groups")
    void weightsShareTheDiskAsAsked(String group) throws Exception {
        Published heavy = publish(group, "heavy", Map.of("ioWeight", "800"), QosClass.BURSTABLE);
        Published light = publish(group, "light", Map.of("ioWeight", "100"), QosClass.BURSTABLE);
        List<Double> iops = IoCostPods.randomReads(List.of(heavy, light), FIO_SECONDS);
        double ratio = iops.get(0) / iops.get(1);
        note("%s: ioWeight 800 vs 100, 4 KiB random reads: %.0f vs %.0f IOPS, ratio %.2f (asked %.0f; model %s)",
                group, iops.get(0), iops.get(1), ratio, RATIO, models.get(group).settings());
        assertTrue(Math.abs(ratio - RATIO) <= RATIO * RATIO_TOLERANCE, group + ": ratio " + ratio + " for 8:1: " + iops);
    }

    /**
     * A read floor of 30% of what the model promises for reads, against four saturating
     * neighbours in two QoS classes: two read 4 KiB at random, two read 1 MiB in order (whose
     * cost io.cost prices from the model's byte rate).
     */
    @ParameterizedTest
    @MethodSource("groups")
    void aFloorHoldsAgainstRandomAndSequentialNeighbours(String group) throws Exception {
        DiskCapacity capacity = models.get(group).capacity(VRATE);
        long floor = capacity.readIops().getAsLong() * 30 / 100;
        Published floored = publish(group, "floored", Map.of("readIOPSFloor", Long.toString(floor)), QosClass.BURSTABLE);
        List<Published> all = new ArrayList<>(List.of(floored));
        List<QosClass> classes = List.of(QosClass.BURSTABLE, QosClass.BESTEFFORT, QosClass.BURSTABLE, QosClass.BESTEFFORT);
        for (QosClass qos : classes) {
            all.add(publish(group, "neighbour" + all.size(), Map.of(), qos));
        }
        Thread.sleep(io.lvmqos.guarantee.PodShares.REBALANCE_PERIOD.toMillis() * 2);
        List<List<String>> jobs = new ArrayList<>();
        for (int i = 0; i < all.size(); i++) {
            Published p = all.get(i);
            jobs.add(i <= 2 ? IoCostPods.randomReadJob(p.target(), IoCostPods.jobName(p), FIO_SECONDS)
                    : IoCostPods.sequentialReadJob(p.target(), IoCostPods.jobName(p), FIO_SECONDS));
        }
        List<Double> iops = IoCostPods.readIops(jobs, all.stream().map(Published::pod).toList(), FIO_SECONDS);
        note("%s: readIOPSFloor %d (of %s) against 2 random and 2 sequential neighbours: %.0f IOPS; random"
                + " neighbours %.0f and %.0f IOPS, sequential neighbours %.1f and %.1f MiB/s", group, floor, capacity,
                iops.get(0), iops.get(1), iops.get(2), iops.get(3), iops.get(4));
        assertTrue(iops.getFirst() >= FLOOR_HELD * floor, group + ": the floored pod got " + iops.getFirst()
                + " IOPS of its floor " + floor + ": " + iops);
    }

    /** A linear volume of the group, published raw into a new pod. */
    private Published publish(String group, String name, Map<String, String> parameters, QosClass qos)
            throws Exception {
        Map<String, String> withGroup = new LinkedHashMap<>(parameters);
        withGroup.put("volumeGroup", group);
        Published p = IoCostPods.publish(driver.client(), group + "-" + name, withGroup, qos, Csi2.block(), 64 * MIB);
        published.add(p);
        return p;
    }

    private static void note(String format, Object... args) {
        String line = String.format(format, args);
        System.out.println("disk-shapes: " + line);
        report.add(line);
    }
}
