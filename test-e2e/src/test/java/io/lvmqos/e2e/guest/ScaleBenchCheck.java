package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.bench.BenchReport.ms;
import static io.lvmqos.e2e.bench.BenchReport.percentile;
import static io.lvmqos.e2e.guest.Csi2.MIB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.lvmqos.device.DeviceNumber;
import io.lvmqos.e2e.CsiClient;
import io.lvmqos.e2e.DriverProcess;
import io.lvmqos.e2e.bench.BenchReport;
import io.lvmqos.e2e.guest.GuestPods.Pod;
import io.lvmqos.e2e.guest.GuestPods.QosClass;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import io.lvmqos.volume.LvmNames;
import io.lvmqos.volume.VolumeTags;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Guest side of ScaleBenchmark (issue 17): one node grown to 10, 100 and 500 thin volumes, each
 * staged and published into a pod of its own (a pod cgroup with a container cgroup below it, as
 * kubelet lays them out), every other one with a write limit. At each size: NodePublishVolume and
 * NodeUnpublishVolume of one more volume over {@value #ROUNDS} rounds, CreateVolume and
 * DeleteVolume each beside a bare {@code lvcreate} and {@code lvremove} fork with the driver's
 * options (issue 27), {@value #BATCH} CreateVolume calls at once against {@value #BATCH} bare
 * {@code lvcreate} forks in a row, full metrics scrapes (checked to run no command), ControllerModifyVolume of a
 * volume used by one pod, {@value #BATCH} publishes in a row against the same at once, the
 * driver's restart to its first ready Probe, and its idle RSS. At the largest size, where
 * device-mapper minors pass 255, every pod's io.max is checked to name its volume's major:minor,
 * and a sample of limited volumes with such minors is written to with dd to see the limit hold.
 *
 * <p>The volumes beyond the driver's own few are made by this check, not by CreateVolume: one
 * {@code lvm} process, fed one {@code lvcreate --snapshot} per volume on standard input, makes
 * thin snapshots of two template volumes the driver created and formatted, with the templates'
 * tags and their own name tag, exactly what CreateVolume leaves behind except for the thin
 * origin. 500 CreateVolume calls (an lvm process and a mkfs each) would take most of the 15
 * minutes the benchmark may run. Writes {@value #REPORT}.md and {@value #REPORT}.dat (the plot's
 * data) into the guest's output directory.
 */
public class ScaleBenchCheck {

    public static final String REPORT = "scale";
    /** The environment variable that carries the node sizes into the guest (ScaleBenchmark sets it). */
    public static final String SIZES_ENV = "LVMQOS_SCALE_SIZES";

    /** The node sizes, smallest first: 10, 100 and 500, or those the host's {@code -Dlvmqos.scaleSizes} names. */
    private static final int[] SIZES = Arrays.stream(
            System.getenv().getOrDefault(SIZES_ENV, "10,100,500").split(",")).mapToInt(Integer::parseInt).toArray();
    private static final int ROUNDS = 100;
    /**
     * As many as PublishBenchmark's: the driver's C1 compiles the publish path only after some 100
     * calls (its compiler thread ran for 320 of the 2156 ms of the rounds after 10 warm-up ones, and
     * the calls' times fell from 5-11 ms to 2-3 ms over them). The warm-up rounds' own p50 is reported
     * as the cold figure.
     */
    private static final int WARMUP = 50;
    private static final int CONTROLLER_CALLS = 10;
    private static final int MODIFY_CALLS = 6;
    private static final int BATCH = 100;
    private static final int SCRAPES = 5;
    private static final int DD_SAMPLE = 3;
    private static final long VOLUME_BYTES = 16 * MIB;
    private static final long WRITE_BPS = 4L << 20;
    private static final String METRICS = "127.0.0.1:9808";
    private static final Duration BARE_TIMEOUT = Duration.ofMinutes(2);
    private static final Map<String, String> LIMITED = Map.of("lvmType", "thin", "writeBPS", "4Mi");
    private static final Map<String, String> FREE = Map.of("lvmType", "thin");
    /**
     * SimpleLogger with thread names: "... [thread] DEBUG CommandRunner - argv exited 0 in 45 ms", or
     * LvmShell for a command run in one of the driver's lvm shells (the line then ends with the shell's pid).
     */
    private static final Pattern COMMAND_LINE =
            Pattern.compile("\\[([^\\]]*)\\] DEBUG (?:CommandRunner|LvmShell) - (.*) exited (-?\\d+) in (\\d+) ms");
    /** Threads of the driver that run lvm on their own schedule, not for a request. */
    private static final List<String> BACKGROUND_THREADS = List.of("health-check", "metrics-lvm-report", "startup");
    private static final List<String> DRIVER_LOGGING = List.of(
            "-Dorg.slf4j.simpleLogger.log.io.lvmqos.exec.CommandRunner=debug",
                "-Dorg.slf4j.simpleLogger.log.io.lvmqos.lvm.LvmShell=debug",
            // each scrape's parts: "metrics: 500 volumes in 500 pods: X ms for the mount table ..."
            "-Dorg.slf4j.simpleLogger.log.io.lvmqos.metrics.VolumeCollector=debug",
            // publish and unpublish, step by step: "publish ... at ...: lock N us, device N us, ..."
            "-Dorg.slf4j.simpleLogger.log.io.lvmqos.node.NodeService=debug",
            "-Dorg.slf4j.simpleLogger.showThreadName=true");

    @BeforeAll
    static void onlyInTheGuest() {
        GuestEnv.assumeInGuest();
    }

    /** A volume published into a pod of its own. */
    private record Published(String id, String lvName, boolean limited, Path staging, Path target, Pod pod) {
    }

    /** What one size measured. */
    private record Level(int volumes, double[] publish, double[] unpublish, double[] create, double[] delete,
                         double[] bareCreate, double[] bareRemove, double[] bulk, double scrapeMillis, int scrapeBytes, int scrapeCommands, double modify, double batchInRow,
                         double batchAtOnce, int batch, double restart, double rssMiB, int mountEntries,
                         double[] server, String roundsCpu) {
        double create50() {
            return percentile(create, 50);
        }

        double bareCreate50() {
            return percentile(bareCreate, 50);
        }
    }

    private final List<Published> published = new ArrayList<>();
    /** LVs made but not yet staged and published: {LV name, "true" if limited}. */
    private final List<String[]> pendingLvs = new ArrayList<>();
    /** Volume ids are {@code <prefix>/<node>/<vg>/<lv>}: everything before the LV name, from a template's id. */
    private String idPrefix;
    private int driverStarts;
    private DriverProcess driver;
    private CsiClient client;
    private Path driverLog;

    @Test
    void growTheNodeAndMeasureEachSize() throws Exception {
        assertEquals(CgroupMode.V2, GuestEnv.cgroupMode(), "the scale benchmark measures io.max: boot with cgroup v2");
        long started = System.nanoTime();
        start();
        try {
            Csi.VolumeCapability capability = Csi2.mount();
            Csi.Volume limitedTemplate = template("scale-template-limited", LIMITED, capability);
            Csi.Volume freeTemplate = template("scale-template-free", FREE, capability);
            idPrefix = limitedTemplate.getVolumeId().substring(0, limitedTemplate.getVolumeId().lastIndexOf('/') + 1);
            Csi.Volume measured = create("scale-measured", LIMITED);
            Path measuredStaging = stage(measured.getVolumeId(), capability);
            Pod roundsPod = GuestPods.create(QosClass.BURSTABLE);
            roundsPod.newContainer();
            List<Level> levels = new ArrayList<>();
            List<String> timeline = new ArrayList<>();
            for (int size : SIZES) {
                long t0 = System.nanoTime();
                prepare(size, limitedTemplate, freeTemplate);
                long t1 = System.nanoTime();
                // the new LVs were made behind the driver's back: a start indexes them, as after a node reboot
                restart();
                long t2 = System.nanoTime();
                publishNew(capability);
                long t3 = System.nanoTime();
                timeline.add(size + " volumes: " + Math.round((t1 - t0) / 1e9) + " s to make the LVs, "
                        + Math.round((t3 - t2) / 1e9) + " s to stage and publish them");
                levels.add(measure(size, measured, measuredStaging, capability, roundsPod));
                long elapsed = Math.round((System.nanoTime() - started) / 1e9);
                System.out.println("scale: " + size + " volumes measured after " + elapsed + " s");
                // a run that dies at a later size (the guest's timeout, a failed call) still leaves these
                Files.writeString(GuestEnv.outDir().resolve(REPORT + "-partial.md"), report(levels, timeline,
                        "not checked: this report was written before the checks at the largest size", elapsed));
            }
            String checks = checkLimitsAtScale();
            String md = report(levels, timeline, checks, Math.round((System.nanoTime() - started) / 1e9));
            BenchReport.writeTo(GuestEnv.outDir(), REPORT, md);
            Files.writeString(GuestEnv.outDir().resolve(REPORT + ".dat"), plotData(levels));
        } finally {
            client.close();
            driver.terminate(Duration.ofSeconds(60));
        }
    }

    // ---- the driver

    private void start() throws Exception {
        driverLog = GuestEnv.outDir().resolve("driver-scale-" + (driverStarts++) + ".log");
        GuestDriver started = GuestDriver.start(GuestDriver.Options.standard().log(driverLog).jvmFlags(DRIVER_LOGGING)
                .args(List.of("--metrics-address", METRICS)).awaitingReady());
        driver = started.process();
        client = started.client();
    }

    /** SIGTERM, then a new process; returns the milliseconds from its start to its first ready Probe. */
    private double restart() throws Exception {
        client.close();
        driver.terminate(Duration.ofSeconds(60));
        long t0 = System.nanoTime();
        start();
        return (System.nanoTime() - t0) / 1e6;
    }

    private Csi.Volume create(String name, Map<String, String> parameters) {
        return client.controller().createVolume(Csi2.create(name, VOLUME_BYTES, parameters).build()).getVolume();
    }

    /** Created, staged (formatted) and unstaged by the driver: a formatted thin LV to snapshot. */
    private Csi.Volume template(String name, Map<String, String> parameters, Csi.VolumeCapability capability) {
        Csi.Volume volume = create(name, parameters);
        Path staging = stage(volume.getVolumeId(), capability);
        client.node().nodeUnstageVolume(Csi.NodeUnstageVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).setStagingTargetPath(staging.toString()).build());
        return volume;
    }

    private Path stage(String volumeId, Csi.VolumeCapability capability) {
        return Csi2.stageByLvName(client, volumeId, capability);
    }

    private Csi.NodePublishVolumeRequest publishRequest(String volumeId, Path staging, Path target, Pod pod,
                                                        Csi.VolumeCapability capability) {
        return Csi.NodePublishVolumeRequest.newBuilder().setVolumeId(volumeId)
                .setStagingTargetPath(staging.toString()).setTargetPath(target.toString())
                .setVolumeCapability(capability).putVolumeContext("csi.storage.k8s.io/pod.uid", pod.uid()).build();
    }

    private Csi.NodeUnpublishVolumeRequest unpublishRequest(String volumeId, Path target) {
        return Csi.NodeUnpublishVolumeRequest.newBuilder().setVolumeId(volumeId).setTargetPath(target.toString()).build();
    }

    // ---- growing the node

    /**
     * Thin snapshots of the templates up to {@code size} volumes, every other one limited, made by
     * one lvm process reading its commands from standard input, each LV with its template's tags
     * and a name tag of its own.
     */
    private void prepare(int size, Csi.Volume limitedTemplate, Csi.Volume freeTemplate) throws Exception {
        String vg = GuestEnv.volumeGroup();
        Map<Boolean, List<String>> tags = Map.of(true, tagsOf(vg, Csi2.lvName(limitedTemplate.getVolumeId())),
                false, tagsOf(vg, Csi2.lvName(freeTemplate.getVolumeId())));
        StringBuilder script = new StringBuilder();
        List<String[]> made = new ArrayList<>();
        for (int i = published.size() + pendingLvs.size(); i < size; i++) {
            boolean limited = i % 2 == 0;
            String name = "scale-" + i;
            String lv = LvmNames.volumeLvName(name);
            String template = Csi2.lvName((limited ? limitedTemplate : freeTemplate).getVolumeId());
            script.append("lvcreate --yes --snapshot --name ").append(lv)
                    .append(" --setactivationskip n --activate y");
            for (String tag : tags.get(limited)) {
                script.append(" --addtag ").append(tag.startsWith(VolumeTags.NAME + "=")
                        ? VolumeTags.NAME + "=" + VolumeTags.encodeName(name) : tag);
            }
            script.append(" -- ").append(vg).append('/').append(template).append('\n');
            made.add(new String[] {lv, Boolean.toString(limited)});
        }
        if (made.isEmpty()) {
            return;
        }
        Path commands = GuestEnv.outDir().resolve("scale-lvcreate-" + size + ".txt");
        Files.writeString(commands, script);
        Process lvm = new ProcessBuilder("lvm").redirectInput(commands.toFile()).redirectErrorStream(true)
                .redirectOutput(GuestEnv.outDir().resolve("scale-lvcreate-" + size + ".log").toFile()).start();
        assertTrue(lvm.waitFor(10, TimeUnit.MINUTES), "lvm did not make " + made.size() + " LVs in 10 minutes");
        String listed = GuestCommand.ok("lvm", "lvs", "--noheadings", "-o", "lv_name,lv_active", vg);
        for (String[] lv : made) {
            assertTrue(listed.lines().map(String::strip).anyMatch(l -> l.startsWith(lv[0] + " ") && l.endsWith("active")),
                    "lvm made and activated " + lv[0] + ": see scale-lvcreate-" + size + ".log; lvs says\n" + listed);
            pendingLvs.add(lv);
        }
    }

    private static List<String> tagsOf(String vg, String lv) {
        String out = GuestCommand.ok("lvm", "lvs", "--noheadings", "-o", "lv_tags", vg + "/" + lv).strip();
        return Arrays.stream(out.split(",")).map(String::strip).filter(t -> !t.isEmpty()).toList();
    }

    /** Stages and publishes the LVs made since the last size, each into a new pod with a container. */
    private void publishNew(Csi.VolumeCapability capability) throws IOException {
        for (String[] lv : pendingLvs) {
            String id = idPrefix + lv[0];
            Path staging = stage(id, capability);
            Pod pod = GuestPods.create(QosClass.BURSTABLE);
            pod.newContainer();
            Path target = pod.volumePath("pv-" + lv[0]);
            client.node().nodePublishVolume(publishRequest(id, staging, target, pod, capability));
            published.add(new Published(id, lv[0], Boolean.parseBoolean(lv[1]), staging, target, pod));
        }
        pendingLvs.clear();
    }

    // ---- one size

    private Level measure(int size, Csi.Volume measured, Path staging, Csi.VolumeCapability capability, Pod pod)
            throws Exception {
        assertEquals(size, published.size(), "volumes published");
        // publish and unpublish of one more volume, to a fresh target each round
        long[] publish = new long[ROUNDS];
        long[] unpublish = new long[ROUNDS];
        GuestCpuTime cpuBefore = null;
        long roundsStart = 0;
        for (int i = -WARMUP; i < ROUNDS; i++) {
            if (i == 0) {
                cpuBefore = GuestCpuTime.now();
                roundsStart = System.nanoTime();
            }
            Path target = pod.volumePath("round-" + size + "-" + (i + WARMUP));
            long t0 = System.nanoTime();
            client.node().nodePublishVolume(publishRequest(measured.getVolumeId(), staging, target, pod, capability));
            long t1 = System.nanoTime();
            client.node().nodeUnpublishVolume(unpublishRequest(measured.getVolumeId(), target));
            long t2 = System.nanoTime();
            // as kubelet does after an unpublish (csi_mounter's removeMountDir): the volume's
            // directory goes too, so the rounds do not pile up directories in the pod
            Files.deleteIfExists(target.getParent());
            if (i >= 0) {
                publish[i] = t1 - t0;
                unpublish[i] = t2 - t1;
            }
        }
        String roundsCpu = Math.round((System.nanoTime() - roundsStart) / 1e6) + " ms of wall time, "
                + GuestCpuTime.now().since(cpuBefore, 6) + " (the driver is pid " + driver.process().pid()
                + ", this client " + ProcessHandle.current().pid() + ")";
        // CreateVolume and DeleteVolume of a thin volume, each round beside one bare lvcreate and
        // lvremove fork with the driver's options, so that both see the same host load
        List<String> tags = driverTags(size);
        long[] creates = new long[CONTROLLER_CALLS];
        long[] deletes = new long[CONTROLLER_CALLS];
        long[] bareCreates = new long[CONTROLLER_CALLS];
        long[] bareRemoves = new long[CONTROLLER_CALLS];
        for (int i = 0; i < CONTROLLER_CALLS; i++) {
            String bare = "bare-" + size + "-" + i;
            long b0 = System.nanoTime();
            GuestCommand.run(BARE_TIMEOUT, bareLvcreate(bare, tags)).requireSuccess();
            long b1 = System.nanoTime();
            GuestCommand.run(BARE_TIMEOUT, bareLvremove(bare)).requireSuccess();
            bareCreates[i] = b1 - b0;
            bareRemoves[i] = System.nanoTime() - b1;
            long t0 = System.nanoTime();
            Csi.Volume volume = create("scale-controller-" + size + "-" + i, FREE);
            long t1 = System.nanoTime();
            client.controller().deleteVolume(Csi.DeleteVolumeRequest.newBuilder()
                    .setVolumeId(volume.getVolumeId()).build());
            creates[i] = t1 - t0;
            deletes[i] = System.nanoTime() - t1;
        }
        double[] bulk = bulkCreates(size, tags);
        // full scrapes after one to warm up; the driver's background lvm (its health check every
        // 10 s, the LVM report a scrape starts) competes for the guest's one CPU, hence the p50;
        // which commands the driver ran meanwhile comes from its log
        MetricsScrape.of(METRICS, "");
        long logBefore = Files.size(driverLog);
        long[] scrapes = new long[SCRAPES];
        MetricsScrape scrape = null;
        for (int i = 0; i < SCRAPES; i++) {
            scrape = MetricsScrape.of(METRICS, "");
            scrapes[i] = scrape.tookNanos();
        }
        String during = readFrom(driverLog, logBefore);
        List<String> commands = commandsOutsideBackground(during);
        assertTrue(commands.isEmpty(), "a scrape ran no command, but the driver logged " + commands);
        long limitedPublished = published.stream().filter(Published::limited).count();
        long limitSeries = scrape.samples().stream()
                .filter(s -> s.name().equals("lvmqos_volume_io_limit_bytes_per_second"))
                .filter(s -> s.labels().get("pod_uid") != null && !s.labels().get("pod_uid").equals(pod.uid()))
                .count();
        assertEquals(limitedPublished, limitSeries, "one write-limit series per limited published volume");
        int scrapeBytes = scrape.text().getBytes(StandardCharsets.UTF_8).length;
        double modify = modify();
        double[] batch = batch(capability);
        Published any = published.getFirst();
        int mountEntries = Files.readAllLines(Path.of("/proc/self/mountinfo")).size();
        String log = Files.readString(driverLog);
        List<Double> serverPublish = serverSide(log, "NodePublishVolume", measured.getVolumeId());
        List<Double> serverUnpublish = serverSide(log, "NodeUnpublishVolume", measured.getVolumeId());
        double[] server = {percentile(timed(serverPublish), 50), percentile(timed(serverUnpublish), 50),
                percentile(timed(serverPublish), 99), percentile(timed(serverUnpublish), 99),
                percentile(warmUp(serverPublish), 50), percentile(warmUp(serverUnpublish), 50)};
        double restart = restart();
        assertTrue(Files.isDirectory(any.target()), "still published after the restart: " + any.target());
        Thread.sleep(5000);
        double rss = residentMiB(driver.process().pid());
        return new Level(size, BenchReport.millis(publish), BenchReport.millis(unpublish),
                BenchReport.millis(creates), BenchReport.millis(deletes), BenchReport.millis(bareCreates),
                BenchReport.millis(bareRemoves), bulk, percentile(BenchReport.millis(scrapes), 50), scrapeBytes, commands.size(), modify, batch[0], batch[1],
                (int) batch[2], restart, rss, mountEntries, server, roundsCpu);
    }

    // ---- bare lvm beside the driver

    /**
     * The tags CreateVolume put on a thin volume of this benchmark's kind, read back from LVM: the
     * bare forks carry the same tags (same count and lengths), so their command lines are as long
     * and their metadata commits as large as the driver's. The volume is deleted again at once.
     */
    private List<String> driverTags(int size) {
        Csi.Volume volume = create("scale-bare-tags-" + size, FREE);
        String lv = volume.getVolumeId().substring(volume.getVolumeId().lastIndexOf('/') + 1);
        List<String> tags = tagsOf(GuestEnv.volumeGroup(), lv);
        client.controller().deleteVolume(Csi.DeleteVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId()).build());
        return tags;
    }

    /**
     * One bare lvcreate of a thin volume, with the options the driver's Lvm.createThin passes
     * (mirrored here by hand from csi-controller's lvm/Lvm.java on 2026-12-05, not derived from it:
     * the benchmark must not depend on how the driver reaches lvm). Run by GuestCommand as the
     * driver's CommandRunner runs its commands: an argument list, LC_ALL=C, both streams drained.
     */
    private static List<String> bareLvcreate(String name, List<String> tags) {
        List<String> argv = new ArrayList<>(List.of("lvm", "lvcreate", "--yes", "--activate", "y", "--name", name,
                "--virtualsize", VOLUME_BYTES + "b", "--thinpool", GuestEnv.thinPool().orElseThrow()));
        for (String tag : tags) {
            argv.add("--addtag");
            argv.add(tag);
        }
        argv.add("--");
        argv.add(GuestEnv.volumeGroup());
        return argv;
    }

    /** The driver's Lvm.remove, mirrored the same way. */
    private static List<String> bareLvremove(String name) {
        return List.of("lvm", "lvremove", "--yes", "--", GuestEnv.volumeGroup() + "/" + name);
    }

    /**
     * {@value #BATCH} CreateVolume calls at once from as many threads, then {@value #BATCH} bare
     * lvcreate forks one after the other (lvm serialises a VG's metadata changes anyway: in a row is
     * how a bare script would do it); the volumes of each are removed before the other starts, the
     * driver's at once, the bare ones in a row. Returns the totals in ms: {driver creates, bare
     * creates, driver deletes, bare removes}.
     */
    private double[] bulkCreates(int size, List<String> tags) throws Exception {
        List<String> ids;
        long driverCreates;
        long driverDeletes;
        try (ExecutorService threads = Executors.newFixedThreadPool(BATCH)) {
            List<Future<Csi.Volume>> calls = new ArrayList<>();
            long t0 = System.nanoTime();
            for (int i = 0; i < BATCH; i++) {
                String name = "scale-bulk-" + size + "-" + i;
                calls.add(threads.submit(() -> createRetryingAborted(name)));
            }
            ids = new ArrayList<>();
            for (Future<Csi.Volume> call : calls) {
                ids.add(call.get(15, TimeUnit.MINUTES).getVolumeId());
            }
            driverCreates = System.nanoTime() - t0;
            List<Future<?>> deletes = new ArrayList<>();
            long t1 = System.nanoTime();
            for (String id : ids) {
                deletes.add(threads.submit(() -> client.controller().deleteVolume(
                        Csi.DeleteVolumeRequest.newBuilder().setVolumeId(id).build())));
            }
            for (Future<?> call : deletes) {
                call.get(15, TimeUnit.MINUTES);
            }
            driverDeletes = System.nanoTime() - t1;
        }
        long t2 = System.nanoTime();
        for (int i = 0; i < BATCH; i++) {
            GuestCommand.run(BARE_TIMEOUT, bareLvcreate("bare-bulk-" + size + "-" + i, tags)).requireSuccess();
        }
        long bareCreates = System.nanoTime() - t2;
        long t3 = System.nanoTime();
        for (int i = 0; i < BATCH; i++) {
            GuestCommand.run(BARE_TIMEOUT, bareLvremove("bare-bulk-" + size + "-" + i)).requireSuccess();
        }
        long bareRemoves = System.nanoTime() - t3;
        return new double[] {driverCreates / 1e6, bareCreates / 1e6, driverDeletes / 1e6, bareRemoves / 1e6};
    }

    /**
     * CreateVolume retried on ABORTED, as the external-provisioner does: at 500 LVs, 100 calls at
     * once left some too little of their deadline to wait for the VG's bound (2026-12-05: "volume
     * group lvmqos is busy: 4 lvm commands are running on it and 90 more wait"); the retries count
     * in the total.
     */
    private Csi.Volume createRetryingAborted(String name) {
        for (int attempt = 1; ; attempt++) {
            try {
                return create(name, FREE);
            } catch (io.grpc.StatusRuntimeException e) {
                if (e.getStatus().getCode() != io.grpc.Status.Code.ABORTED || attempt == 20) {
                    throw e;
                }
                System.out.println("scale: " + name + " ABORTED, retried: " + e.getStatus().getDescription());
            }
        }
    }

    /**
     * ControllerModifyVolume of a limited volume used by one pod, its write limit switched between
     * 8Mi and 4Mi: the p50 of {@value #MODIFY_CALLS} calls, each checked to reach the pod's io.max.
     */
    private double modify() throws IOException {
        Published volume = published.stream().filter(Published::limited).findFirst().orElseThrow();
        DeviceNumber device = DeviceNumber.of(devicePath(volume));
        long[] took = new long[MODIFY_CALLS];
        for (int i = 0; i < MODIFY_CALLS; i++) {
            String bps = i % 2 == 0 ? "8Mi" : "4Mi";
            long t0 = System.nanoTime();
            client.controller().controllerModifyVolume(Csi.ControllerModifyVolumeRequest.newBuilder()
                    .setVolumeId(volume.id()).putMutableParameters("writeBPS", bps).build());
            took[i] = System.nanoTime() - t0;
            long expected = i % 2 == 0 ? 8L << 20 : 4L << 20;
            String ioMax = Files.readString(volume.pod().cgroup().resolve("io.max"));
            assertTrue(ioMax.lines().anyMatch(l -> l.startsWith(device + " ") && l.contains("wbps=" + expected)),
                    "ControllerModifyVolume to writeBPS=" + bps + " reached the pod's io.max:\n" + ioMax);
        }
        return percentile(BenchReport.millis(took), 50);
    }

    /**
     * {@value #BATCH} published volumes (unlimited ones, so only mounts differ) unpublished, then
     * published again one after the other, then unpublished and published again all at once from
     * as many threads. Returns {in a row ms, at once ms, count}: the publishes only.
     */
    private double[] batch(Csi.VolumeCapability capability) throws Exception {
        List<Published> chosen = published.stream().limit(BATCH).toList();
        for (Published p : chosen) {
            client.node().nodeUnpublishVolume(unpublishRequest(p.id(), p.target()));
        }
        long t0 = System.nanoTime();
        for (Published p : chosen) {
            client.node().nodePublishVolume(publishRequest(p.id(), p.staging(), p.target(), p.pod(), capability));
        }
        long inRow = System.nanoTime() - t0;
        for (Published p : chosen) {
            client.node().nodeUnpublishVolume(unpublishRequest(p.id(), p.target()));
        }
        long atOnce;
        try (ExecutorService threads = Executors.newFixedThreadPool(chosen.size())) {
            List<Future<?>> calls = new ArrayList<>();
            long t1 = System.nanoTime();
            for (Published p : chosen) {
                calls.add(threads.submit(() -> client.node().nodePublishVolume(
                        publishRequest(p.id(), p.staging(), p.target(), p.pod(), capability))));
            }
            for (Future<?> call : calls) {
                call.get(5, TimeUnit.MINUTES);
            }
            atOnce = System.nanoTime() - t1;
        }
        return new double[] {inRow / 1e6, atOnce / 1e6, chosen.size()};
    }

    // ---- at the largest size

    /**
     * Every pod's io.max names its volume's major:minor with the write limit, or nothing for an
     * unlimited volume; then dd in a new container of pods whose volumes have minors above 255
     * must not write faster than the limit allows.
     */
    private String checkLimitsAtScale() throws IOException {
        int aboveByte = 0;
        List<Published> sample = new ArrayList<>();
        for (Published p : published) {
            DeviceNumber device = DeviceNumber.of(devicePath(p));
            String ioMax = Files.readString(p.pod().cgroup().resolve("io.max"));
            boolean limitLine = ioMax.lines().anyMatch(l -> l.startsWith(device + " ") && l.contains("wbps="));
            if (p.limited()) {
                assertTrue(ioMax.lines().anyMatch(l -> l.startsWith(device + " ")
                                && (l.contains("wbps=" + WRITE_BPS) || l.contains("wbps=" + (8L << 20)))),
                        p.lvName() + " (" + device + ") is limited in its pod's io.max:\n" + ioMax);
            } else {
                assertTrue(!limitLine, p.lvName() + " (" + device + ") is not limited in its pod's io.max:\n" + ioMax);
            }
            assertTrue(ioMax.lines().allMatch(l -> l.startsWith(device + " ")),
                    "the pod of " + p.lvName() + " has limits on its own volume's device " + device + " only:\n" + ioMax);
            if (device.minor() > 255) {
                aboveByte++;
                if (p.limited() && sample.size() < DD_SAMPLE && ioMax.contains("wbps=" + WRITE_BPS)) {
                    sample.add(p);
                }
            }
        }
        // a node of a few hundred LVs has minors past one byte (the benchmark's 500 does); a quick
        // run of small sizes only (-Dlvmqos.scaleSizes) may have none
        assertTrue(aboveByte > 0 || published.size() < 300,
                "some device-mapper minors are above 255 at " + published.size() + " volumes");
        StringBuilder rates = new StringBuilder();
        for (Published p : sample) {
            int mebibytes = 12;
            Path file = p.target().resolve("dd.bin");
            List<String> argv = p.pod().inNewContainer(List.of("dd", "if=/dev/zero", "of=" + file, "bs=1M",
                    "count=" + mebibytes, "oflag=direct", "status=none"));
            long t0 = System.nanoTime();
            GuestCommand.run(Duration.ofMinutes(2), argv).requireSuccess();
            double seconds = (System.nanoTime() - t0) / 1e9;
            double mibPerSecond = mebibytes / seconds;
            Files.delete(file);
            assertTrue(mibPerSecond <= 1.3 * WRITE_BPS / MIB, p.lvName() + " (" + DeviceNumber.of(devicePath(p))
                    + ") wrote " + mibPerSecond + " MiB/s under a " + (WRITE_BPS / MIB) + " MiB/s limit");
            rates.append(String.format("%s %.2f MiB/s; ", DeviceNumber.of(devicePath(p)), mibPerSecond));
        }
        if (published.size() >= 300) {
            assertEquals(DD_SAMPLE, sample.size(), "limited volumes with minors above 255 to write to");
        }
        return aboveByte + " of " + published.size() + " volumes have a minor above 255; every pod's io.max names "
                + "its own volume's major:minor (limited ones with wbps, unlimited ones not at all). " + (sample.isEmpty()
                ? "No limited volume has a minor above 255 to write to at this size."
                : "dd of 12 MiB (oflag=direct) in a new container of " + sample.size() + " such pods under "
                + "writeBPS 4Mi: " + rates.toString().strip());
    }

    private static Path devicePath(Published p) {
        return Path.of("/dev", GuestEnv.volumeGroup(), p.lvName());
    }

    // ---- reading the driver

    private static String readFrom(Path log, long offset) throws IOException {
        byte[] all = Files.readAllBytes(log);
        return new String(all, (int) Math.min(offset, all.length), (int) Math.max(0, all.length - offset),
                StandardCharsets.UTF_8);
    }

    private static List<String> commandsOutsideBackground(String log) {
        List<String> found = new ArrayList<>();
        Matcher m = COMMAND_LINE.matcher(log);
        while (m.find()) {
            if (BACKGROUND_THREADS.stream().noneMatch(t -> m.group(1).startsWith(t))) {
                found.add("[" + m.group(1) + "] " + m.group(2));
            }
        }
        return found;
    }

    /** The driver's own durations of the calls on one volume, from its RPC log line (whole ms), in order. */
    private static List<Double> serverSide(String log, String method, String volumeId) {
        Matcher m = Pattern.compile("rpc - " + method + " " + Pattern.quote(volumeId) + " (\\d+) ms OK").matcher(log);
        List<Double> found = new ArrayList<>();
        while (m.find()) {
            found.add(Double.parseDouble(m.group(1)));
        }
        return found;
    }

    /** The timed rounds' calls: the last {@value #ROUNDS}. */
    private static double[] timed(List<Double> calls) {
        return calls.subList(Math.max(0, calls.size() - ROUNDS), calls.size()).stream()
                .mapToDouble(Double::doubleValue).toArray();
    }

    /** The warm-up rounds' calls: the {@value #WARMUP} before the timed ones. */
    private static double[] warmUp(List<Double> calls) {
        int end = Math.max(0, calls.size() - ROUNDS);
        return calls.subList(Math.max(0, end - WARMUP), end).stream().mapToDouble(Double::doubleValue).toArray();
    }

    private static double residentMiB(long pid) throws IOException {
        return Files.readAllLines(Path.of("/proc", Long.toString(pid), "status")).stream()
                .filter(l -> l.startsWith("VmRSS:")).findFirst()
                .map(l -> Long.parseLong(l.replaceAll("\\D+", "")) / 1024.0)
                .orElseThrow(() -> new AssertionError("no VmRSS for " + pid));
    }

    // ---- the report

    private static String report(List<Level> levels, List<String> timeline, String checks, long seconds) {
        StringBuilder md = new StringBuilder("## Scale: one node with 10, 100 and 500 published volumes (issue 17)\n\n")
                .append("User-mode-Linux guest (kernel ").append(System.getProperty("os.version"))
                .append(", 1 CPU), cgroup v2, thin volumes of 16 MiB (ext4), each staged and published into a pod ")
                .append("of its own (pod cgroup in the systemd layout with one container cgroup), every other one ")
                .append("with `writeBPS: 4Mi`. Publish/unpublish: one more limited volume to a fresh target, ")
                .append(ROUNDS).append(" rounds after ").append(WARMUP).append(" warm-up ones. Client-side wall ")
                .append("times in ms over the driver's unix socket; the driver runs with deploy/jvm.options.\n\n");
        md.append("| | ").append(levels.stream().map(l -> "N = " + l.volumes()).collect(Collectors.joining(" | ")))
                .append(" | N = ").append(levels.getFirst().volumes()).append(" → ").append(levels.getLast().volumes())
                .append(" |\n|---").append("|---".repeat(levels.size() + 1)).append("|\n");
        Map<String, ToDoubleFunction<Level>> rows = new LinkedHashMap<>();
        rows.put("NodePublishVolume p50", l -> percentile(l.publish(), 50));
        rows.put("NodePublishVolume p99", l -> percentile(l.publish(), 99));
        rows.put("NodeUnpublishVolume p50", l -> percentile(l.unpublish(), 50));
        rows.put("NodeUnpublishVolume p99", l -> percentile(l.unpublish(), 99));
        rows.put("NodePublishVolume p50, server side (driver's log, whole ms)", l -> l.server()[0]);
        rows.put("NodeUnpublishVolume p50, server side (driver's log, whole ms)", l -> l.server()[1]);
        rows.put("NodePublishVolume p99, server side (driver's log, whole ms)", l -> l.server()[2]);
        rows.put("NodeUnpublishVolume p99, server side (driver's log, whole ms)", l -> l.server()[3]);
        rows.put("NodePublishVolume p50 of the " + WARMUP + " warm-up rounds, server side", l -> l.server()[4]);
        rows.put("NodeUnpublishVolume p50 of the " + WARMUP + " warm-up rounds, server side", l -> l.server()[5]);
        rows.put("bare `lvcreate` fork p50 (the driver's options, " + CONTROLLER_CALLS + " forks)", Level::bareCreate50);
        rows.put("bare `lvcreate` fork p99", l -> percentile(l.bareCreate(), 99));
        rows.put("CreateVolume p50 (thin, " + CONTROLLER_CALLS + " calls)", Level::create50);
        rows.put("CreateVolume p99", l -> percentile(l.create(), 99));
        rows.put("CreateVolume p50 / bare lvcreate p50", l -> l.create50() / l.bareCreate50());
        rows.put("bare `lvremove` fork p50", l -> percentile(l.bareRemove(), 50));
        rows.put("bare `lvremove` fork p99", l -> percentile(l.bareRemove(), 99));
        rows.put("DeleteVolume p50", l -> percentile(l.delete(), 50));
        rows.put("DeleteVolume p99", l -> percentile(l.delete(), 99));
        rows.put("DeleteVolume p50 / bare lvremove p50",
                l -> percentile(l.delete(), 50) / percentile(l.bareRemove(), 50));
        rows.put(BATCH + " CreateVolume at once from " + BATCH + " threads (total)", l -> l.bulk()[0]);
        rows.put(BATCH + " bare `lvcreate` forks in a row (total)", l -> l.bulk()[1]);
        rows.put(BATCH + " creates: driver at once / bare in a row", l -> l.bulk()[0] / l.bulk()[1]);
        rows.put(BATCH + " DeleteVolume at once (total)", l -> l.bulk()[2]);
        rows.put(BATCH + " bare `lvremove` forks in a row (total)", l -> l.bulk()[3]);
        rows.put("metrics scrape p50 (" + SCRAPES + " scrapes, whole answer)", Level::scrapeMillis);
        rows.put("metrics answer (KiB)", l -> l.scrapeBytes() / 1024.0);
        rows.put("ControllerModifyVolume p50 (volume in one pod)", Level::modify);
        rows.put(BATCH + " publishes in a row (total)", Level::batchInRow);
        rows.put(BATCH + " publishes at once (total)", Level::batchAtOnce);
        rows.put("restart to first ready Probe", Level::restart);
        rows.put("driver RSS at idle (MiB)", Level::rssMiB);
        rows.put("mount table entries", l -> l.mountEntries());
        rows.forEach((label, value) -> {
            md.append("| ").append(label);
            for (Level l : levels) {
                md.append(" | ").append(ms(value.applyAsDouble(l)));
            }
            double first = value.applyAsDouble(levels.getFirst());
            double last = value.applyAsDouble(levels.getLast());
            md.append(" | ").append(String.format("%.2f×", last / first)).append(" |\n");
        });
        md.append("\nThe batch rows publish ").append(levels.stream().map(l -> Integer.toString(l.batch()))
                        .collect(Collectors.joining(" / "))).append(" already staged volumes (fewer than ").append(BATCH)
                .append(" where the node has fewer); at once means from as many client threads. Commands the ")
                .append("driver ran while it answered the timed scrapes (its CommandRunner debug log, background ")
                .append("threads left out): ").append(levels.stream().map(l -> Integer.toString(l.scrapeCommands()))
                        .collect(Collectors.joining(" / "))).append(".\n\n")
                .append("At N = ").append(levels.getLast().volumes()).append(": ").append(checks).append("\n\n")
                .append("Who ran during the timed publish rounds (CPU time per thread from /proc, in 10 ms ticks; ")
                .append("the guest has one CPU, so another thread's time stretches the calls):\n\n")
                .append(levels.stream().map(l -> "- N = " + l.volumes() + ": " + l.roundsCpu())
                        .collect(Collectors.joining("\n"))).append("\n\n")
                .append("Growing the node: ").append(String.join("; ", timeline)).append(". The LVs beyond the ")
                .append("driver's own were made as thin snapshots of two formatted template volumes by one lvm ")
                .append("process (see ScaleBenchCheck). Whole run in the guest: ").append(seconds).append(" s.\n");
        return md.toString();
    }

    /** Gnuplot's data: one row per size, p50s in ms. */
    private static String plotData(List<Level> levels) {
        StringBuilder dat = new StringBuilder("# volumes publish_p50 unpublish_p50 scrape restart create_p50"
                + " bare_lvcreate_p50 delete_p50 bare_lvremove_p50\n");
        for (Level l : levels) {
            dat.append(String.format(Locale.ROOT, "%d %.3f %.3f %.3f %.1f %.1f %.1f %.1f %.1f%n", l.volumes(),
                    percentile(l.publish(), 50), percentile(l.unpublish(), 50), l.scrapeMillis(), l.restart(),
                    l.create50(), l.bareCreate50(), percentile(l.delete(), 50), percentile(l.bareRemove(), 50)));
        }
        return dat.toString();
    }
}
