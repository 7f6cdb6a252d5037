package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.guest.Csi2.create;
import static io.lvmqos.e2e.guest.Csi2.expectCode;
import static io.lvmqos.e2e.guest.IoCostPods.diskOf;
import static io.lvmqos.e2e.guest.IoCostPods.weightLine;
import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import csi.v1.Csi;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lvmqos.e2e.deploy.DashboardQueries;
import io.lvmqos.e2e.deploy.DashboardQueries.Query;
import io.lvmqos.e2e.guest.GuestPods.Pod;
import io.lvmqos.e2e.guest.IoCostPods.Published;
import io.lvmqos.e2e.guest.GuestPods.QosClass;
import io.lvmqos.e2e.qemu.QemuMonitorRequests;
import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import io.lvmqos.guarantee.CostModel;
import io.lvmqos.guarantee.PodShares;
import io.lvmqos.volume.LvmNames;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Weights and floors through the driver's own parameters, in a node whose kernel has io.cost
 * (Debian's stock kernel under qemu, {@code QemuGuest}): the one disk is throttled by qemu to a
 * fixed number of I/O operations per second, so the disk, not the emulated CPU, is what the pods
 * contend for. Every pod reads 4 KiB blocks at random from a raw block volume of its own on the
 * thin pool, with direct I/O and 16 in flight, from a container cgroup below its pod cgroup, the
 * way kubelet lays pods out (a kubepods tree with QoS slices, system.slice beside it).
 *
 * <p>Nobody writes a model by hand: the driver first starts with --io-cost and no model, and must
 * refuse every guarantee naming the command to run and leave io.cost off; then {@code lvmqos
 * calibrate} measures the disk (with the deployed JVM options) and records the model in the group's
 * tag, and the driver, restarted, turns io.cost on with it and admits floors against it.
 * Nothing here writes io.weight or io.cost files: the driver does. The figures go to the run's out
 * dir as guarantee.txt.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
public class GuaranteeCheck {

    /** What qemu lets the disk do (QemuGuest's throttle). */
    public static final int DISK_IOPS = 400;
    private static final String METRICS = "127.0.0.1:9811";
    private static final int FIO_SECONDS = 20;
    private static final ObjectMapper JSON = IoCostPods.JSON;
    private static final String TRUSTED = "lvmqos_io_cost_model_trusted";
    /** The driver's default QoS pins io.cost's vrate here (IoCostSettings.DEFAULT_QOS); floors count at the lowest. */
    private static final double VRATE = qos().map(q -> Double.parseDouble(CostModel.settingsOf(q).getOrDefault("min",
            "95"))).orElse(95.0);

    private static Optional<String> qos() {
        return Optional.ofNullable(System.getenv(QOS)).filter(q -> !q.isBlank());
    }

    @RegisterExtension
    static final DriverForTheClass driver = DriverForTheClass.withGuestArgs(() -> {
        List<String> args = new ArrayList<>(List.of("--metrics-address", METRICS, "--io-cost", GuestEnv.volumeGroup()));
        qos().ifPresent(qos -> args.addAll(List.of("--io-cost-qos", GuestEnv.volumeGroup() + ":" + qos)));
        return args;
    }).startedBySetUp();
    /** Guest variable: io.cost QoS settings in place of the driver's default, for measuring others (GuaranteeIT). */
    public static final String QOS = "LVMQOS_GUARANTEE_QOS";
    /** The model the calibration measured, and what floors are admitted against: its random IOPS at the lowest vrate. */
    private static CostModel calibrated;
    private static long capacityIops;
    /** What the disk gives one reader with io.cost off: measured before the driver turns it on. */
    private static double uncontrolledIops;
    private static final List<String> report = new ArrayList<>();

    private final List<Published> published = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        GuestEnv.assumeInGuest();
        // kubelet's neighbours at the root: system.slice, where the node's own services run
        Files.createDirectories(GuestEnv.cgroupRoot().resolve("system.slice"));
        uncontrolledIops = readIops(List.of(fioArgs(GuestEnv.disks().getFirst(), "vda")), List.of())
                .getFirst();
        note("the disk alone, io.cost off: %.0f IOPS", uncontrolledIops);
        String group = GuestEnv.volumeGroup();

        // io.cost asked for, no model anywhere: nothing promised, io.cost left off, the way out named
        driver.start();
        StatusRuntimeException refused = expectCode(Status.Code.FAILED_PRECONDITION, () -> driver.client().controller()
                .createVolume(create("unmodelled", 32 * MIB, Map.of("lvmType", "thin", "ioWeight", "300")).build()));
        String why = refused.getStatus().getDescription();
        note("io.cost asked for, no model: %s", why);
        assertTrue(why.contains("lvmqos calibrate --volume-group " + group), why);
        assertFalse(ioCostOn(wholeDisk()), "io.cost left off on a disk without a trusted model");
        assertEquals(0, MetricsScrape.await(METRICS, m -> m.value(TRUSTED, Map.of("volume_group", group)).isPresent(),
                Duration.ofSeconds(60)).require(TRUSTED, Map.of("volume_group", group)));
        assertFalse(ok("lvm", "lvs", "--noheadings", "-o", "lv_name").contains(LvmNames.volumeLvName("unmodelled")));

        // the calibration, as an operator runs it: the plugin's jar and JVM options, a linear LV of its own
        long started = System.nanoTime();
        GuestCommand.Result calibration = IoCostPods.calibrate("--volume-group", group, "--size", "512Mi", "--seconds", "5");
        note("lvmqos calibrate took %.0f s:%n%s", (System.nanoTime() - started) / 1e9, calibration.stdout().strip());
        assertEquals(0, calibration.exitCode(), calibration.stdout() + calibration.stderr());
        String modelLine = calibration.stdout().lines().filter(l -> l.startsWith(wholeDisk() + " ctrl=user"))
                .findFirst().orElseThrow(() -> new AssertionError("no io.cost.model line: " + calibration.stdout()));
        calibrated = CostModel.fromSettings(CostModel.settingsOf(modelLine.substring(modelLine.indexOf(' ') + 1)))
                .orElseThrow();
        // qemu counts every request against the one throttle, whatever its direction: random 4 KiB
        // requests are its figure. Sequential ones may do better, never worse: qemu's virtio-blk merges
        // adjacent requests that reach it in one batch before its throttle counts them, and a host
        // busy with other work makes the batches longer (531 and 596 beside other builds, 2026-12-07)
        for (long iops : List.of(calibrated.rrandiops(), calibrated.wrandiops())) {
            assertTrue(iops >= 0.9 * DISK_IOPS && iops <= 1.1 * DISK_IOPS, "random 4 KiB IOPS of a disk throttled to "
                    + DISK_IOPS + ": " + modelLine);
        }
        for (long iops : List.of(calibrated.rseqiops(), calibrated.wseqiops())) {
            assertTrue(iops >= 0.9 * DISK_IOPS, "sequential 4 KiB IOPS of a disk throttled to " + DISK_IOPS + ": "
                    + modelLine);
        }
        assertTrue(ok("lvm", "vgs", "--noheadings", "-o", "vg_tags", group).contains("lvmqos.iocost=rbps:"
                + calibrated.rbps() + "/"), "the model is recorded in the group's tag");
        assertFalse(ok("lvm", "lvs", "--noheadings", "-o", "lv_name", group).contains("lvmqos_calibration"),
                "the calibration removed its LV");
        assertFalse(ioCostOn(wholeDisk()), "the calibration left io.cost as it found it");

        driver.restart();
        assertTrue(driver.log().contains("io.cost on volume group " + group), "the driver says what it set:\n"
                + driver.log());
        assertTrue(ioCostOn(wholeDisk()));
        capacityIops = calibrated.capacity(VRATE).iops().getAsLong();
    }

    /** Whether io.cost.qos says enable=1 for the disk. */
    private static boolean ioCostOn(String disk) throws IOException {
        return Files.readAllLines(GuestEnv.cgroupRoot().resolve("io.cost.qos")).stream()
                .anyMatch(line -> line.startsWith(disk + " ") && line.contains(" enable=1"));
    }

    @AfterEach
    void tearDown() {
        IoCostPods.removeAll(driver.client(), published);
    }

    @AfterAll
    static void stop() throws Exception {
        if (GuestEnv.inGuest()) {
            Files.write(GuestEnv.outDir().resolve("guarantee.txt"), report, StandardCharsets.UTF_8);
        }
    }

    @Test
    @Order(1)
    void weightsShareTheContendedDiskAndAWeightedPodAloneGetsAllOfIt() throws Exception {
        Published heavy = publish("heavy", Map.of("lvmType", "thin", "ioWeight", "800"), QosClass.BURSTABLE);
        Published light = publish("light", Map.of("lvmType", "thin", "ioWeight", "100"), QosClass.BURSTABLE);
        String disk = diskOf(heavy);
        assertEquals("800", weightLine(heavy.pod().cgroup(), disk), "the heavy pod's own weight on the disk");

        List<Double> iops = contend(heavy, light);
        double ratio = iops.get(0) / iops.get(1);
        note("ioWeight 800 vs 100: %.0f vs %.0f IOPS, ratio %.2f (asked 8)", iops.get(0), iops.get(1), ratio);
        // The claim: the ratio within 15% of the weights'. With the vrate pinned at 95% of a
        // calibrated model, 8.00 in a clean-clone run and 7.18 beside other builds on the host
        // (2026-12-07); at 100% the shares blurred to 3.56, which is why the default is 95. A host
        // loaded by other guests makes the emulated guest's timers fire late and the light pod catch
        // up: run the qemu checks one at a time, as ./run-tests does.
        assertTrue(iops.get(0) >= 0.85 * 8 / 9 * capacityIops, "the weighted pod's share: " + iops);
        assertTrue(Math.abs(ratio - 8) <= 8 * 0.15, "ratio " + ratio + " for weights 8:1: " + iops);

        double alone = readIops(List.of(fioArgs(heavy.target(), "alone")), List.of(heavy.pod())).getFirst();
        note("ioWeight 800 alone: %.0f IOPS, %.0f%% of the disk with io.cost off", alone, 100 * alone / uncontrolledIops);
        assertTrue(alone >= 0.9 * uncontrolledIops, "alone " + alone + " < 90% of " + uncontrolledIops);

        // a class change reaches the running pod's cgroup before the call answers: a watcher sees when
        long asked = System.nanoTime();
        CompletableFuture<Long> rewritten = CompletableFuture.supplyAsync(() -> {
            try {
                while (!"100".equals(weightLine(heavy.pod().cgroup(), disk))) {
                    Thread.sleep(2);
                }
                return System.nanoTime();
            } catch (IOException | InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        driver.client().controller().controllerModifyVolume(Csi.ControllerModifyVolumeRequest.newBuilder()
                .setVolumeId(heavy.volume().getVolumeId()).putMutableParameters("ioWeight", "100").build());
        long replied = System.nanoTime();
        assertEquals("100", weightLine(heavy.pod().cgroup(), disk), "the new weight in the running pod's cgroup at the reply");
        long seen = rewritten.get(10, TimeUnit.SECONDS);
        assertTrue(seen <= replied, "the weight was rewritten only after the reply");
        note("ControllerModifyVolume ioWeight 800 -> 100: io.weight rewritten after %.0f ms (seen by a 2 ms poll),"
                + " answered after %.0f ms (the lvs and lvchange that record it)", (seen - asked) / 1e6, (replied - asked) / 1e6);

        List<Double> equal = contend(heavy, light);
        double equalRatio = equal.get(0) / equal.get(1);
        note("ioWeight 100 vs 100: %.0f vs %.0f IOPS, ratio %.2f", equal.get(0), equal.get(1), equalRatio);
        assertTrue(Math.abs(equalRatio - 1) <= 0.15, "equal weights gave " + equalRatio);
    }

    @Test
    @Order(2)
    void aFloorHoldsAgainstFourSaturatingNeighboursInOtherQosClasses() throws Exception {
        Published floored = publish("floored", Map.of("lvmType", "thin", "iopsFloor", "200"), QosClass.BURSTABLE);
        List<Published> neighbours = new ArrayList<>();
        for (QosClass qos : List.of(QosClass.BURSTABLE, QosClass.BURSTABLE, QosClass.BESTEFFORT, QosClass.BESTEFFORT)) {
            neighbours.add(publish("neighbour" + neighbours.size(), Map.of("lvmType", "thin"), qos));
        }
        // the neighbours' pods appeared after the floored one's weights were set: the driver counts them
        // at its next periodic pass, as it would count pods kubelet makes at any time
        Thread.sleep(PodShares.REBALANCE_PERIOD.toMillis() * 2);
        String disk = diskOf(floored);
        Path kubepods = floored.pod().cgroup().getParent().getParent();
        note("floor 200 of %d IOPS: weights kubepods %s, QoS slice %s, pod %s", capacityIops,
                weightLine(kubepods, disk), weightLine(floored.pod().cgroup().getParent(), disk),
                weightLine(floored.pod().cgroup(), disk));
        List<Published> all = new ArrayList<>(List.of(floored));
        all.addAll(neighbours);
        List<Double> iops = contend(all.toArray(Published[]::new));
        note("floor 200 against 4 saturating neighbours: %.0f IOPS; neighbours %s", iops.getFirst(),
                iops.subList(1, iops.size()).stream().map(v -> String.format("%.0f", v)).toList());
        assertTrue(iops.getFirst() >= 180, "the floored pod got " + iops.getFirst() + " IOPS, below 180: " + iops);

        // the admission: 200 of the calibrated capacity (about 400) promised, so 300 more does not fit
        StatusRuntimeException refused = expectCode(Status.Code.RESOURCE_EXHAUSTED,
                () -> driver.client().controller().createVolume(create("toomuch", 32 * MIB,
                        Map.of("lvmType", "thin", "iopsFloor", "300")).build()));
        String message = refused.getStatus().getDescription();
        note("a floor that does not fit: %s", message);
        assertTrue(message.contains("promised 200 IOPS") && message.contains("asked 300 IOPS")
                && message.contains("capacity " + calibrated.capacity(VRATE) + " ("), message);
        assertFalse(ok("lvm", "lvs", "--noheadings", "-o", "lv_name").contains(LvmNames.volumeLvName("toomuch")),
                "a refused create leaves no LV");
        // raising a floor beyond the disk changes nothing
        expectCode(Status.Code.RESOURCE_EXHAUSTED, () -> driver.client().controller().controllerModifyVolume(
                Csi.ControllerModifyVolumeRequest.newBuilder().setVolumeId(neighbours.getFirst().volume().getVolumeId())
                        .putMutableParameters("iopsFloor", "250").build()));
        assertFalse(tagsOf(neighbours.getFirst()).contains("fiops"), "a refused modify leaves the tags as they were");
        // the metrics show what is promised against the capacity, and that the model is trusted
        MetricsScrape metrics = MetricsScrape.of(METRICS, "");
        assertEquals(200, metrics.require("lvmqos_floor_promised_iops", Map.of("volume_group", GuestEnv.volumeGroup())));
        assertEquals(capacityIops, metrics.require("lvmqos_floor_capacity_iops", Map.of("volume_group",
                GuestEnv.volumeGroup())));
        assertEquals(1, metrics.require(TRUSTED, Map.of("volume_group", GuestEnv.volumeGroup())));
    }

    @Test
    @Order(3)
    void aDeletedVolumeFreesItsFloorAndItsPodsWeightsGo() throws Exception {
        Published first = publish("first", Map.of("lvmType", "thin", "iopsFloor", "300"), QosClass.BESTEFFORT);
        String disk = diskOf(first);
        Path slice = first.pod().cgroup().getParent();
        assertTrue(weightLine(slice, disk) != null, "the floored pod's QoS slice has a weight on the disk");
        Csi2.unpublishUnstageDelete(driver.client(), first.volume().getVolumeId(), first.staging(), List.of(first.target()));
        published.remove(first);
        GuestPods.remove(first.pod());
        assertEquals(null, weightLine(slice, disk), "no line is left once no floored pod is on the disk");
        Published second = publish("second", Map.of("lvmType", "thin", "iopsFloor", "300"), QosClass.BURSTABLE);
        assertTrue(weightLine(second.pod().cgroup(), disk) != null);
    }

    @Test
    @Order(4)
    void aCapStillHoldsExactlyBesideAShare() throws Exception {
        Published capped = publish("capped", Map.of("lvmType", "thin", "ioWeight", "800", "readIOPS", "100"),
                QosClass.BURSTABLE);
        Published other = publish("other", Map.of("lvmType", "thin"), QosClass.BURSTABLE);
        List<Double> iops = contend(capped, other);
        note("ioWeight 800 with readIOPS 100 beside an unlimited pod: %.0f vs %.0f IOPS", iops.get(0), iops.get(1));
        assertTrue(iops.get(0) >= 95 && iops.get(0) <= 105, "capped pod at " + iops.get(0));
        assertTrue(iops.get(1) >= 0.6 * uncontrolledIops, "the other pod takes the rest: " + iops.get(1));
    }

    @Test
    @Order(5)
    void badGuaranteesAreRefusedWithTheParameterNamed() {
        for (String weight : List.of("0", "10001", "1.5", "abc")) {
            StatusRuntimeException e = expectCode(Status.Code.INVALID_ARGUMENT, () -> driver.client().controller()
                    .createVolume(create("bad-weight", 32 * MIB, Map.of("lvmType", "thin", "ioWeight", weight)).build()));
            assertTrue(e.getStatus().getDescription().contains("ioWeight"), e.getStatus().getDescription());
        }
        StatusRuntimeException aboveCap = expectCode(Status.Code.INVALID_ARGUMENT, () -> driver.client().controller()
                .createVolume(create("above-cap", 32 * MIB, Map.of("lvmType", "thin", "readIOPS", "100",
                        "readIOPSFloor", "150")).build()));
        note("a floor above the cap: %s", aboveCap.getStatus().getDescription());
        // a byte floor is admitted against the model's sequential byte rate, of the slower direction
        long tooManyBytes = calibrated.capacity(VRATE).bps().getAsLong() * 101 / 100;
        StatusRuntimeException beyondBytes = expectCode(Status.Code.RESOURCE_EXHAUSTED, () -> driver.client()
                .controller().createVolume(create("beyond-bytes", 32 * MIB, Map.of("lvmType", "thin",
                        "bpsFloor", Long.toString(tooManyBytes))).build()));
        note("a bytes floor beyond the model: %s", beyondBytes.getStatus().getDescription());
        assertTrue(beyondBytes.getStatus().getDescription().contains("asked " + tooManyBytes + " bytes/s"),
                beyondBytes.getStatus().getDescription());
        String lvs = ok("lvm", "lvs", "--noheadings", "-o", "lv_name");
        for (String name : List.of("bad-weight", "above-cap", "beyond-bytes")) {
            assertFalse(lvs.contains(LvmNames.volumeLvName(name)), name + " left an LV");
        }
    }

    // --- helpers ---

    private Published publish(String name, Map<String, String> parameters, QosClass qos) throws IOException {
        return publish(name, parameters, qos, Csi2.block(), 32 * MIB);
    }

    private Published publish(String name, Map<String, String> parameters, QosClass qos,
                              Csi.VolumeCapability capability, long bytes) throws IOException {
        Published p = IoCostPods.publish(driver.client(), name, parameters, qos, capability, bytes);
        published.add(p);
        return p;
    }

    /**
     * What a weight does for buffered writes, which the kernel's flusher writes back later on the
     * pod's behalf: each pod (memory.max 48 MiB, as kubelet sets a limit, so that dirty pages are
     * throttled to what writeback achieves) overwrites at random a file it wrote itself on an ext4
     * volume. Writing the file first, from the pod, provisions the thin blocks and makes the pod the
     * owner of the file's writeback (docs/guarantees.md says what happens otherwise).
     */
    @Test
    @Order(6)
    void bufferedWritesAreWrittenBackInTheWeightedShares() throws Exception {
        Csi.VolumeCapability ext4 = Csi2.mount("ext4", Csi.VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER);
        List<Published> pods = List.of(
                publish("bufheavy", Map.of("lvmType", "thin", "ioWeight", "800"), QosClass.BURSTABLE, ext4, 320 * MIB),
                publish("buflight", Map.of("lvmType", "thin", "ioWeight", "100"), QosClass.BURSTABLE, ext4, 320 * MIB));
        String disk = wholeDisk();
        for (Published p : pods) {
            Files.writeString(p.pod().cgroup().resolve("memory.max"), String.valueOf(48 * MIB));
            Process fill = new ProcessBuilder(p.pod().inNewContainer(List.of("dd", "if=/dev/zero",
                    "of=" + p.target().resolve("data"), "bs=1M", "count=256", "conv=fsync", "status=none")))
                    .redirectErrorStream(true).start();
            assertEquals(0, fill.waitFor(), new String(fill.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
        }
        List<Long> before = List.of(writesOn(pods.get(0).pod().cgroup(), disk), writesOn(pods.get(1).pod().cgroup(), disk));
        List<Process> running = new ArrayList<>();
        for (Published p : pods) {
            running.add(new ProcessBuilder(p.pod().inNewContainer(List.of("fio", "--output-format=json", "--name=buffered",
                    "--filename=" + p.target().resolve("data"), "--rw=randwrite", "--bs=4k", "--ioengine=psync",
                    "--size=256M", "--time_based", "--runtime=" + FIO_SECONDS))).redirectErrorStream(true).start());
        }
        List<Double> written = new ArrayList<>();
        for (Process fio : running) {
            String out = new String(fio.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(fio.waitFor(FIO_SECONDS + 60, TimeUnit.SECONDS), "fio did not finish");
            assertEquals(0, fio.exitValue(), out);
            written.add(JSON.readTree(out.substring(out.indexOf('{'))).path("jobs").get(0).path("write").path("iops")
                    .asDouble());
        }
        long heavy = writesOn(pods.get(0).pod().cgroup(), disk) - before.get(0);
        long light = writesOn(pods.get(1).pod().cgroup(), disk) - before.get(1);
        note("buffered 4 KiB random overwrites, ioWeight 800 vs 100, memory.max 48 MiB: the applications wrote"
                + " %.0f vs %.0f IOPS; the disk took %d vs %d writes charged to the pods (%.2f:1)",
                written.get(0), written.get(1), heavy, light, (double) heavy / light);
        // the flusher's writes carry the pod's cgroup, so the weights reach them
        assertTrue(heavy > 2 * light, "writeback for weights 8:1: " + heavy + " vs " + light);
    }

    /**
     * The disk made slower than its model while pods run (qemu's throttle halved through its
     * monitor): the floored pod falls short, and the driver says so in the volume's condition, a
     * metric and its log; with the disk back to what its model says, the floor is kept and the
     * condition clears under the same contention.
     */
    @Test
    @Order(7)
    void aFloorTheDiskCannotKeepIsReportedAndClearsWhenTheDiskRecovers() throws Exception {
        Published floored = publish("watched", Map.of("lvmType", "thin", "iopsFloor", "200"), QosClass.BURSTABLE);
        List<Published> all = new ArrayList<>(List.of(floored));
        for (QosClass qos : List.of(QosClass.BURSTABLE, QosClass.BURSTABLE, QosClass.BESTEFFORT, QosClass.BESTEFFORT)) {
            all.add(publish("slowdisk" + all.size(), Map.of("lvmType", "thin"), qos));
        }
        Thread.sleep(PodShares.REBALANCE_PERIOD.toMillis() * 2);
        int slow = DISK_IOPS / 2;
        QemuMonitorRequests.request(GuestEnv.outDir(), "block_set_io_throttle virtio0 0 0 0 " + slow + " 0 0",
                Duration.ofSeconds(30));
        Csi.VolumeCondition shortCondition;
        MetricsScrape whileShort;
        double unmetMetric;
        List<Double> slowIops;
        try {
            CompletableFuture<List<Double>> running = contendInBackground(all);
            shortCondition = awaitCondition(floored, true, Duration.ofSeconds(FIO_SECONDS + 10));
            whileShort = MetricsScrape.of(METRICS, "");
            unmetMetric = whileShort.require("lvmqos_floors_unmet", Map.of("volume_group", GuestEnv.volumeGroup()));
            slowIops = running.get(FIO_SECONDS + 60, TimeUnit.SECONDS);
        } finally {
            QemuMonitorRequests.request(GuestEnv.outDir(), "block_set_io_throttle virtio0 0 0 0 " + DISK_IOPS + " 0 0",
                    Duration.ofSeconds(30));
        }
        note("disk throttled to %d IOPS under a model of %d: the floored pod got %.0f IOPS (neighbours %s);"
                + " NodeGetVolumeStats said: %s; lvmqos_floors_unmet %.0f", slow, calibrated.rrandiops(),
                slowIops.getFirst(), slowIops.subList(1, slowIops.size()).stream().map(v -> String.format("%.0f", v))
                        .toList(), shortCondition.getMessage(), unmetMetric);
        assertTrue(shortCondition.getMessage().contains("iopsFloor=200 not met"), shortCondition.getMessage());
        assertEquals(1, unmetMetric);
        assertTrue(driver.log().contains("are not being kept"), "the driver logs the disk whose floors fall short");
        // the dashboard's guarantees row, which only a node running io.cost serves, against that scrape
        List<Query> guarantees = DashboardQueries.of(DashboardQueries.file()).stream()
                .filter(DashboardQueries::needsIoCost).toList();
        List<String> unserved = DashboardCoverage.unserved(guarantees, whileShort);
        note("dashboard: %d queries of the guarantees row checked against the scrape", guarantees.size());
        assertTrue(!guarantees.isEmpty() && unserved.isEmpty(), "the dashboard uses what the driver does not serve:\n"
                + String.join("\n", unserved) + "\nscrape:\n" + whileShort.text());

        CompletableFuture<List<Double>> recovered = contendInBackground(all);
        // judged on a whole window (10 s) of contention on the recovered disk, not on the idle pause before it
        Thread.sleep(14_000);
        Csi.VolumeCondition kept = awaitCondition(floored, false, Duration.ofSeconds(1));
        List<Double> iops = recovered.get(FIO_SECONDS + 60, TimeUnit.SECONDS);
        note("disk back to %d IOPS: the floored pod got %.0f IOPS; NodeGetVolumeStats said: %s", DISK_IOPS,
                iops.getFirst(), kept.getMessage());
        assertTrue(iops.getFirst() >= 180, "the floor on the recovered disk: " + iops);
        assertTrue(driver.log().contains("are kept again"), "the driver logs the recovery");
    }

    private static CompletableFuture<List<Double>> contendInBackground(List<Published> pods) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return contend(pods.toArray(Published[]::new));
            } catch (IOException | InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    /** NodeGetVolumeStats of the published volume, asked every second until its condition is {@code abnormal}. */
    private Csi.VolumeCondition awaitCondition(Published p, boolean abnormal, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        Csi.VolumeCondition condition;
        do {
            condition = driver.client().node().nodeGetVolumeStats(Csi.NodeGetVolumeStatsRequest.newBuilder()
                    .setVolumeId(p.volume().getVolumeId()).setVolumePath(p.target().toString()).build())
                    .getVolumeCondition();
            if (condition.getAbnormal() == abnormal) {
                return condition;
            }
            Thread.sleep(1000);
        } while (System.nanoTime() < deadline);
        throw new AssertionError("the volume's condition stayed " + (abnormal ? "normal" : "abnormal") + " for "
                + timeout + ": " + condition.getMessage());
    }

    /** The disk under the volume group (the first the node has), as MAJ:MIN. */
    private static String wholeDisk() {
        String[] hex = ok("stat", "-L", "-c", "%t %T", GuestEnv.disks().getFirst().toString()).strip().split(" ");
        return Integer.parseInt(hex[0], 16) + ":" + Integer.parseInt(hex[1], 16);
    }

    /** The write I/Os io.stat counts for the cgroup on the disk. */
    private static long writesOn(Path cgroup, String disk) throws IOException {
        for (String line : Files.readAllLines(cgroup.resolve("io.stat"))) {
            if (line.startsWith(disk + " ")) {
                for (String field : line.split(" ")) {
                    if (field.startsWith("wios=")) {
                        return Long.parseLong(field.substring("wios=".length()));
                    }
                }
            }
        }
        return 0;
    }

    /** Every pod reads 4 KiB at random at once; their IOPS in the same order. */
    private static List<Double> contend(Published... pods) throws IOException, InterruptedException {
        return IoCostPods.randomReads(List.of(pods), FIO_SECONDS);
    }

    private static List<Double> readIops(List<List<String>> jobs, List<Pod> pods) throws IOException, InterruptedException {
        return IoCostPods.readIops(jobs, pods, FIO_SECONDS);
    }

    static List<String> fioArgs(Path file, String name) {
        return IoCostPods.randomReadJob(file, name, FIO_SECONDS);
    }

    private static String tagsOf(Published p) {
        return ok("lvm", "lvs", "--noheadings", "-o", "lv_tags", GuestEnv.volumeGroup() + "/"
                + Csi2.lvName(p.volume().getVolumeId()));
    }

    private static void note(String format, Object... args) {
        String line = String.format(format, args);
        System.out.println("guarantee: " + line);
        report.add(line);
    }
}
