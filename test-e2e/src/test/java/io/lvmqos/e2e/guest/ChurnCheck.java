package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.ChurnModel.MIB;
import static io.lvmqos.e2e.guest.ChurnModel.pick;

import csi.v1.Csi;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lvmqos.e2e.CsiClient;
import io.lvmqos.e2e.bench.BenchReport;
import io.lvmqos.e2e.guest.ChurnModel.Snapshot;
import io.lvmqos.e2e.guest.ChurnModel.Volume;
import io.lvmqos.e2e.guest.GuestPods.Pod;
import io.lvmqos.e2e.guest.GuestPods.QosClass;
import io.lvmqos.e2e.uml.GuestEnv;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 26, part 2: a long churn with kills. {@value #PODS_DEFAULT} pods (cgroups as kubelet lays
 * them out) and a random mix of CreateVolume (empty, a clone, a restore), NodeStageVolume,
 * NodePublishVolume, ControllerModifyVolume (a VolumeAttributesClass's mutable QoS parameters),
 * CreateSnapshot, GetMetadataAllocated, ControllerExpandVolume with NodeExpandVolume,
 * NodeUnpublishVolume, NodeUnstageVolume, DeleteSnapshot and DeleteVolume, each a real call on the
 * driver's socket, for {@code LVMQOS_CHURN_SECONDS}. At random moments the driver's process tree
 * is SIGKILLed (as a container's OOM kill ends it), often while a call is out, and started again;
 * separately, an lvm that the driver runs for a call is SIGKILLed on its own. Every call is retried
 * with the same request as kubelet and the sidecars retry it, until it succeeds; a call that ends in
 * any other status is a violation (the model only asks what must succeed).
 *
 * <p>After every step, the invariants of {@link ChurnInvariants}, read from the OS: LVs, mounts,
 * the pods' io.max lines against the LV tags, GetCapacity against vgs/lvs, no metadata snapshot
 * held nor device suspended, and the driver's RSS within 10% of its level after warm-up (the
 * first {@value #WARM_UP_STEPS} steps, without kills). The sequence of steps and kills follows
 * from the seed ({@code LVMQOS_CHURN_SEED}, chosen by the host, printed at the start and in any
 * failure); where a kill lands within a call depends on timing, so a replay repeats the steps but
 * not always the exact moment. Past {@value #OWED_KILLS_AFTER} steps a kind of kill that has not
 * landed yet is made on the next step the dice spared, and a churn that still killed the driver or
 * an lvm child not even once fails: it would have checked only the calls. Writes {@value #REPORT}.md.
 */
public class ChurnCheck {

    public static final String REPORT = "churn";
    public static final String SECONDS_ENV = "LVMQOS_CHURN_SECONDS";
    public static final String SEED_ENV = "LVMQOS_CHURN_SEED";
    public static final String PODS_ENV = "LVMQOS_CHURN_PODS";
    static final int PODS_DEFAULT = 20;
    static final int WARM_UP_STEPS = 30;
    /** From this step on, a kind of kill that has not landed yet is made on the next step the dice spared. */
    static final int OWED_KILLS_AFTER = WARM_UP_STEPS + 20;
    /** RSS may grow this much over its post-warm-up level. */
    static final double RSS_SLACK = 0.10;
    private static final Duration ATTEMPT_DEADLINE = Duration.ofSeconds(60);
    /** A call still failing with a retryable status after this long is a violation. */
    private static final Duration GIVE_UP = Duration.ofMinutes(5);
    private static final int MAX_VOLUMES = 30;
    private static final int MAX_SNAPSHOTS = 10;

    private final ChurnModel model = new ChurnModel();
    private final Map<String, Integer> operations = new TreeMap<>();
    private final Map<Status.Code, Integer> retried = new TreeMap<>();
    private final List<Pod> pods = new ArrayList<>();
    private Random random;
    private long seed;
    @RegisterExtension
    static final DriverForTheClass driverPerTest = new DriverForTheClass().startedByEachTest();
    /** The running driver; {@link #killDriver} replaces it with a new one. */
    private volatile GuestDriver driver;
    /** Every driver killed so far: a call on one of their channels lost its connection. */
    private final java.util.Set<GuestDriver> killedDrivers = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** Set while an lvm child of the current call has been killed: the driver may then answer INTERNAL. */
    private final AtomicBoolean lvmKilled = new AtomicBoolean();
    private int driverKillsMidCall;
    private int driverKillsBetweenCalls;
    private int lvmKills;
    private int lvmKillsMissed;
    private int step;
    private int nameCounter;
    private long rssBaseline;
    private long rssMin = Long.MAX_VALUE;
    private long rssMax;
    private int rssSamples;
    private int maxLiveVolumes;
    private long slowestExitMillis;
    private ChurnInvariants invariants;
    private String currentOp = "";

    @BeforeAll
    static void onlyInTheGuest() {
        GuestEnv.assumeInGuest();
    }

    @Test
    void churnWithKillsKeepsEveryInvariant() throws Exception {
        long seconds = Long.parseLong(System.getenv().getOrDefault(SECONDS_ENV, "300"));
        int podCount = Integer.parseInt(System.getenv().getOrDefault(PODS_ENV, Integer.toString(PODS_DEFAULT)));
        seed = Optional.ofNullable(System.getenv(SEED_ENV)).map(Long::parseLong)
                .orElseThrow(() -> new AssertionError(SEED_ENV + " is unset: ChurnIT chooses the seed on the host"));
        random = new Random(seed);
        System.out.println("churn: seed " + seed + " (replay with " + SEED_ENV + "=" + seed + "), " + seconds
                + " s, " + podCount + " pods");
        String vg = GuestEnv.volumeGroup();
        invariants = new ChurnInvariants(vg, GuestEnv.thinPool().orElseThrow());
        for (int i = 0; i < podCount; i++) {
            pods.add(GuestPods.create(QosClass.BURSTABLE));
        }
        driver = driverPerTest.start();
        awaitReady();
        long started = System.nanoTime();
        long end = started + Duration.ofSeconds(seconds).toNanos();
        String failure = null;
        try {
            while (System.nanoTime() < end) {
                step++;
                String op = oneStep();
                operations.merge(op, 1, Integer::sum);
                List<String> wrong = checkInvariants();
                if (!wrong.isEmpty()) {
                    failure = "step " + step + " (" + currentOp + "): " + String.join("; ", wrong);
                    break;
                }
            }
        } catch (Violation | AssertionError | java.io.IOException | java.util.concurrent.TimeoutException e) {
            failure = "step " + step + " (" + currentOp + "): " + e;
            e.printStackTrace();
        }
        long churnNanos = System.nanoTime() - started;
        if (failure == null && (driverKillsMidCall + driverKillsBetweenCalls == 0 || lvmKills == 0)) {
            // a churn without kills checked only the calls, not what a kill leaves behind
            failure = "the churn killed the driver " + (driverKillsMidCall + driverKillsBetweenCalls)
                    + " times and an lvm child " + lvmKills + " times in " + step
                    + " steps; it must do both at least once (run it longer)";
        }
        if (failure == null) {
            try {
                tearDown();
                List<String> wrong = checkInvariants();
                if (!wrong.isEmpty()) {
                    failure = "after the tear-down: " + String.join("; ", wrong);
                }
            } catch (Violation e) {
                failure = "in the tear-down (" + currentOp + "): " + e.getMessage();
            }
        }
        String report = report(seconds, churnNanos, failure);
        BenchReport.writeTo(GuestEnv.outDir(), REPORT, report);
        System.out.println(report);
        if (failure != null) {
            String log = driver.log();
            throw new AssertionError("churn with seed " + seed + " (replay with " + SEED_ENV + "=" + seed + "): violation at "
                    + failure + "\nmodel:\n  " + String.join("\n  ", model.describe()) + "\ndriver log tail:\n"
                    + log.substring(Math.max(0, log.length() - 6000)));
        }
        driver.close();
        pods.forEach(GuestPods::remove);
    }

    /** A status the model did not predict, or a call that never succeeded. */
    static final class Violation extends RuntimeException {
        Violation(String message, Throwable cause) {
            super(message, cause);
        }
    }

    // ---- the steps ----

    private String oneStep() throws Exception {
        boolean warm = step > WARM_UP_STEPS;
        List<String> candidates = new ArrayList<>();
        Map<String, Integer> weights = new LinkedHashMap<>();
        int live = model.volumes.size();
        weights.put("create", live < MAX_VOLUMES ? 12 : 0);
        weights.put("clone", live < MAX_VOLUMES && (!model.volumes(v -> v.thin).isEmpty() || !model.snapshots.isEmpty()) ? 4 : 0);
        weights.put("stage", model.volumes(v -> v.staging.isEmpty()).isEmpty() ? 0 : 12);
        weights.put("publish", model.volumes(v -> v.staging.isPresent() && v.pod.isEmpty()).isEmpty() ? 0 : 12);
        weights.put("modify", live == 0 ? 0 : 8);
        weights.put("snapshot", model.snapshots.size() < MAX_SNAPSHOTS && !model.volumes(v -> v.thin).isEmpty() ? 5 : 0);
        weights.put("metadata", model.snapshots.isEmpty() ? 0 : 3);
        weights.put("expand", model.volumes(v -> v.pod.isPresent()).isEmpty() ? 0 : 5);
        weights.put("unpublish", model.volumes(v -> v.pod.isPresent()).isEmpty() ? 0 : 9);
        weights.put("unstage", model.volumes(v -> v.staging.isPresent() && v.pod.isEmpty()).isEmpty() ? 0 : 8);
        weights.put("deleteSnapshot", model.snapshots.isEmpty() ? 0 : 4);
        weights.put("delete", model.volumes(v -> v.staging.isEmpty()).isEmpty() ? 0 : 9);
        weights.forEach((op, weight) -> {
            for (int i = 0; i < weight; i++) {
                candidates.add(op);
            }
        });
        String op = pick(random, candidates);
        // the kill is decided before the call, from the seed: 6% of the driver (two thirds of them
        // while the call is out), 6% of an lvm it runs for the call
        int dice = random.nextInt(100);
        Kill kill = !warm ? Kill.NONE : dice < 4 ? Kill.DRIVER_DURING : dice < 6 ? Kill.DRIVER_AFTER
                : dice < 12 ? Kill.LVM : Kill.NONE;
        // a churn must kill both ways at least once: past OWED_KILLS_AFTER steps, a kind that has not
        // landed yet is owed, and a step the dice spared pays it (an lvm kill lands only on a call that
        // runs an lvm, so it is owed again until one does)
        if (kill == Kill.NONE && step > OWED_KILLS_AFTER) {
            if (lvmKills == 0) {
                kill = Kill.LVM;
            } else if (driverKillsMidCall + driverKillsBetweenCalls == 0) {
                kill = Kill.DRIVER_DURING;
            }
        }
        long killDelayMillis = random.nextInt(400);
        Runnable call = prepare(op);
        if (call == null) {
            return "skipped (no room in the test's budget)";
        }
        try {
            run(call, kill, killDelayMillis);
        } finally {
            lvmKilled.set(false);
        }
        maxLiveVolumes = Math.max(maxLiveVolumes, model.volumes.size());
        return op;
    }

    private enum Kill { NONE, DRIVER_DURING, DRIVER_AFTER, LVM }

    /**
     * Chooses the subject of the operation from the model, with the seed's random numbers, and
     * returns the call that carries it out and updates the model once it has succeeded; null when
     * the test's own space budget leaves no room for it.
     */
    private Runnable prepare(String op) {
        switch (op) {
            case "create" -> {
                boolean thin = random.nextInt(10) < 7 || model.linearBytes() > 600 * MIB;
                long size = (4 + 4 * random.nextInt(10)) * MIB;
                if (thin && model.thinPromised() + size > 1200 * MIB) {
                    thin = false;
                }
                Map<String, String> parameters = ChurnModel.randomLimits(random, false);
                if (thin) {
                    parameters.put("lvmType", "thin");
                }
                return createCall("create " + (thin ? "thin" : "linear"), size, parameters, thin, Optional.empty());
            }
            case "clone" -> {
                List<String> sources = new ArrayList<>();
                model.volumes(v -> v.thin).forEach(v -> sources.add(v.id));
                model.snapshots.values().forEach(s -> sources.add(s.id()));
                String source = pick(random, sources);
                long sourceSize = Optional.ofNullable(model.snapshots.values().stream()
                        .filter(s -> s.id().equals(source)).findFirst().map(Snapshot::sizeBytes).orElse(null))
                        .orElseGet(() -> model.volumes.values().stream().filter(v -> v.id.equals(source))
                                .findFirst().orElseThrow().sizeBytes);
                long size = sourceSize + 4 * MIB * random.nextInt(3);
                Map<String, String> parameters = ChurnModel.randomLimits(random, false);
                parameters.put("lvmType", "thin");
                if (model.thinPromised() + size > 1200 * MIB) {
                    return null;
                }
                return createCall("clone of " + Csi2.lvName(source), size, parameters, true, Optional.of(source));
            }
            case "stage" -> {
                Volume v = pick(random, model.volumes(x -> x.staging.isEmpty()));
                Path staging = GuestDriver.KUBELET.resolve("plugins/kubernetes.io/csi/lvmqos.csi.io")
                        .resolve(sha256(v.id)).resolve("globalmount");
                Csi.NodeStageVolumeRequest request = Csi.NodeStageVolumeRequest.newBuilder().setVolumeId(v.id)
                        .setStagingTargetPath(staging.toString()).setVolumeCapability(Csi2.mount())
                        .putAllVolumeContext(v.context).build();
                return named("stage " + v.name, () -> {
                    retrying(c -> c.node().nodeStageVolume(request));
                    v.staging = Optional.of(staging);
                });
            }
            case "publish" -> {
                Volume v = pick(random, model.volumes(x -> x.staging.isPresent() && x.pod.isEmpty()));
                int podIndex = random.nextInt(pods.size());
                Pod pod = pods.get(podIndex);
                Path target = pod.volumePath("pv-" + v.name);
                Csi.NodePublishVolumeRequest request = Csi.NodePublishVolumeRequest.newBuilder().setVolumeId(v.id)
                        .setStagingTargetPath(v.staging.orElseThrow().toString()).setTargetPath(target.toString())
                        .setVolumeCapability(Csi2.mount()).putAllVolumeContext(v.context)
                        .putVolumeContext("csi.storage.k8s.io/pod.uid", pod.uid())
                        .putVolumeContext("csi.storage.k8s.io/pod.name", "churn-" + podIndex)
                        .putVolumeContext("csi.storage.k8s.io/pod.namespace", "default")
                        .putVolumeContext("csi.storage.k8s.io/ephemeral", "false").build();
                return named("publish " + v.name + " into pod " + podIndex, () -> {
                    retrying(c -> c.node().nodePublishVolume(request));
                    v.pod = Optional.of(podIndex);
                    v.target = Optional.of(target);
                });
            }
            case "modify" -> {
                Volume v = pick(random, model.volumes(x -> true));
                Map<String, String> mutable = ChurnModel.randomLimits(random, true);
                if (mutable.isEmpty()) {
                    mutable.put("writeBPS", "32Mi");
                }
                Csi.ControllerModifyVolumeRequest request = Csi.ControllerModifyVolumeRequest.newBuilder()
                        .setVolumeId(v.id).putAllMutableParameters(mutable).build();
                return named("modify " + v.name + " " + mutable, () -> {
                    retrying(c -> c.controller().controllerModifyVolume(request));
                    // a class mixing per-GiB IOPS with the volume's per-direction ones replaces them: the mix is
                    // refused only within one set of parameters
                    ChurnModel.apply(mutable, v.limits);
                });
            }
            case "snapshot" -> {
                Volume v = pick(random, model.volumes(x -> x.thin));
                String name = "snap-" + (++nameCounter);
                Csi.CreateSnapshotRequest request = Csi.CreateSnapshotRequest.newBuilder().setName(name)
                        .setSourceVolumeId(v.id).build();
                return named("snapshot " + name + " of " + v.name, () -> {
                    Csi.Snapshot made = retrying(c -> c.controller().createSnapshot(request)).getSnapshot();
                    model.snapshots.put(name, new Snapshot(name, made.getSnapshotId(), v.sizeBytes, v.id));
                });
            }
            case "metadata" -> {
                Snapshot s = pick(random, List.copyOf(model.snapshots.values()));
                Csi.GetMetadataAllocatedRequest request = Csi.GetMetadataAllocatedRequest.newBuilder()
                        .setSnapshotId(s.id()).setMaxResults(64).build();
                return named("allocated blocks of " + s.name(), () -> retrying(c -> {
                    long ranges = 0;
                    var stream = c.snapshotMetadata().withDeadlineAfter(ATTEMPT_DEADLINE.toSeconds(), TimeUnit.SECONDS)
                            .getMetadataAllocated(request);
                    while (stream.hasNext()) {
                        ranges += stream.next().getBlockMetadataCount();
                    }
                    return ranges;
                }));
            }
            case "expand" -> {
                Volume v = pick(random, model.volumes(x -> x.pod.isPresent()));
                long size = v.sizeBytes + 4 * MIB * (1 + random.nextInt(3));
                if ((v.thin && model.thinPromised() + size - v.sizeBytes > 1200 * MIB)
                        || (!v.thin && model.linearBytes() + size - v.sizeBytes > 900 * MIB)) {
                    return null;
                }
                Csi.CapacityRange range = Csi.CapacityRange.newBuilder().setRequiredBytes(size).build();
                Csi.ControllerExpandVolumeRequest controller = Csi.ControllerExpandVolumeRequest.newBuilder()
                        .setVolumeId(v.id).setCapacityRange(range).setVolumeCapability(Csi2.mount()).build();
                Csi.NodeExpandVolumeRequest node = Csi.NodeExpandVolumeRequest.newBuilder().setVolumeId(v.id)
                        .setVolumePath(v.target.orElseThrow().toString())
                        .setStagingTargetPath(v.staging.orElseThrow().toString()).setCapacityRange(range)
                        .setVolumeCapability(Csi2.mount()).build();
                return named("expand " + v.name + " to " + size / MIB + " MiB", () -> {
                    retrying(c -> c.controller().controllerExpandVolume(controller));
                    v.sizeBytes = size;
                    retrying(c -> c.node().nodeExpandVolume(node));
                });
            }
            case "unpublish" -> {
                Volume v = pick(random, model.volumes(x -> x.pod.isPresent()));
                Csi.NodeUnpublishVolumeRequest request = Csi.NodeUnpublishVolumeRequest.newBuilder().setVolumeId(v.id)
                        .setTargetPath(v.target.orElseThrow().toString()).build();
                return named("unpublish " + v.name + " from pod " + v.pod.orElseThrow(), () -> {
                    retrying(c -> c.node().nodeUnpublishVolume(request));
                    v.pod = Optional.empty();
                    v.target = Optional.empty();
                });
            }
            case "unstage" -> {
                Volume v = pick(random, model.volumes(x -> x.staging.isPresent() && x.pod.isEmpty()));
                return unstageCall(v);
            }
            case "deleteSnapshot" -> {
                Snapshot s = pick(random, List.copyOf(model.snapshots.values()));
                return deleteSnapshotCall(s);
            }
            case "delete" -> {
                Volume v = pick(random, model.volumes(x -> x.staging.isEmpty()));
                return deleteCall(v);
            }
            default -> throw new IllegalStateException(op);
        }
    }

    private Runnable createCall(String what, long size, Map<String, String> parameters, boolean thin,
                                Optional<String> source) {
        String name = "churn-" + (++nameCounter);
        Csi.CreateVolumeRequest.Builder request = Csi2.create(name, size, parameters);
        source.ifPresent(id -> request.setVolumeContentSource(model.snapshots.values().stream()
                .anyMatch(s -> s.id().equals(id))
                ? Csi.VolumeContentSource.newBuilder().setSnapshot(
                        Csi.VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(id)).build()
                : Csi.VolumeContentSource.newBuilder().setVolume(
                        Csi.VolumeContentSource.VolumeSource.newBuilder().setVolumeId(id)).build()));
        Csi.CreateVolumeRequest built = request.build();
        Map<String, String> limits = new TreeMap<>();
        Map<String, String> qos = new TreeMap<>(parameters);
        qos.remove("lvmType");
        ChurnModel.apply(qos, limits);
        return named(what + " " + name + " " + size / MIB + " MiB " + qos, () -> {
            Csi.Volume made = retrying(c -> c.controller().createVolume(built)).getVolume();
            Volume v = new Volume(name, made.getVolumeId(), thin, size, source, made.getVolumeContextMap());
            v.limits.putAll(limits);
            model.volumes.put(name, v);
        });
    }

    private Runnable unstageCall(Volume v) {
        Csi.NodeUnstageVolumeRequest request = Csi.NodeUnstageVolumeRequest.newBuilder().setVolumeId(v.id)
                .setStagingTargetPath(v.staging.orElseThrow().toString()).build();
        return named("unstage " + v.name, () -> {
            retrying(c -> c.node().nodeUnstageVolume(request));
            v.staging = Optional.empty();
        });
    }

    private Runnable deleteSnapshotCall(Snapshot s) {
        Csi.DeleteSnapshotRequest request = Csi.DeleteSnapshotRequest.newBuilder().setSnapshotId(s.id()).build();
        return named("delete snapshot " + s.name(), () -> {
            retrying(c -> c.controller().deleteSnapshot(request));
            model.snapshots.remove(s.name());
        });
    }

    private Runnable deleteCall(Volume v) {
        Csi.DeleteVolumeRequest request = Csi.DeleteVolumeRequest.newBuilder().setVolumeId(v.id).build();
        return named("delete " + v.name, () -> {
            retrying(c -> c.controller().deleteVolume(request));
            model.volumes.remove(v.name);
        });
    }

    private Runnable named(String what, Runnable call) {
        return () -> {
            currentOp = what;
            call.run();
        };
    }

    // ---- calls, retries and kills ----

    /** Runs the step's call, killing the driver or an lvm of it as decided, and waits for the call to succeed. */
    private void run(Runnable call, Kill kill, long killDelayMillis) throws Exception {
        lvmKilled.set(false);
        if (kill == Kill.NONE) {
            call.run();
            return;
        }
        if (kill == Kill.DRIVER_AFTER) {
            call.run();
            killDriver();
            driverKillsBetweenCalls++;
            return;
        }
        CompletableFuture<Void> out = CompletableFuture.runAsync(call);
        if (kill == Kill.DRIVER_DURING) {
            TimeUnit.MILLISECONDS.sleep(killDelayMillis);
            if (out.isDone()) {
                driverKillsBetweenCalls++;
            } else {
                driverKillsMidCall++;
            }
            killDriver();
        } else {
            if (killLvmChild(out)) {
                lvmKills++;
            } else {
                lvmKillsMissed++;
            }
        }
        try {
            out.get(GIVE_UP.toMinutes() * 3, TimeUnit.MINUTES);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw e;
        }
    }

    /** SIGKILLs the driver's JVM and every process it started, as a container's kill does, and starts it again. */
    private void killDriver() throws Exception {
        GuestDriver old = driver;
        killedDrivers.add(old);
        ProcessHandle plugin = old.process().process().toHandle();
        try (Stream<ProcessHandle> children = plugin.descendants()) {
            children.forEach(ProcessHandle::destroyForcibly);
        }
        long killed = System.nanoTime();
        plugin.destroyForcibly();
        if (!old.process().process().waitFor(2, TimeUnit.MINUTES)) {
            throw new Violation("the driver's JVM (pid " + plugin.pid() + ") did not end within 2 minutes of its SIGKILL: "
                    + ChurnInvariants.stuck(plugin.pid()), null);
        }
        slowestExitMillis = Math.max(slowestExitMillis, (System.nanoTime() - killed) / 1_000_000);
        old.close();
        driver = driverPerTest.start();
        awaitReady();
    }

    /** SIGKILLs the first lvm the driver runs while the call is out; false when the call ended without one. */
    private boolean killLvmChild(CompletableFuture<?> call) throws InterruptedException {
        ProcessHandle plugin = driver.process().process().toHandle();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!call.isDone() && System.nanoTime() < deadline) {
            Optional<ProcessHandle> lvm;
            try (Stream<ProcessHandle> children = plugin.descendants()) {
                lvm = children.filter(p -> p.info().command().filter(c -> c.endsWith("/lvm")).isPresent()).findFirst();
            }
            if (lvm.isPresent()) {
                lvmKilled.set(true);
                lvm.get().destroyForcibly();
                return true;
            }
            TimeUnit.MILLISECONDS.sleep(2);
        }
        return false;
    }

    /**
     * One call, retried with the same request as kubelet and the sidecars retry it: on UNAVAILABLE
     * (the driver is down or restarting: the connection is lost), DEADLINE_EXCEEDED, ABORTED
     * (another call holds the volume) and CANCELLED; after one of its lvm children was killed,
     * on any status, since kubelet and the sidecars retry every failure and the driver can only
     * report that lvm died; and on any status from the channel of a driver that was killed while
     * the call was out. Any other status is a violation.
     */
    private <T> T retrying(Function<CsiClient, T> rpc) {
        long giveUp = System.nanoTime() + GIVE_UP.toNanos();
        long backoff = 100;
        while (true) {
            GuestDriver used = driver;
            try {
                return rpc.apply(used.client());
            } catch (StatusRuntimeException e) {
                Status.Code code = e.getStatus().getCode();
                // a call on the channel of a driver killed meanwhile: the connection is lost, whatever
                // status the closed channel makes of it (UNKNOWN when its executor is already shut down)
                boolean connectionLost = killedDrivers.contains(used);
                boolean retryable = switch (code) {
                    case UNAVAILABLE, DEADLINE_EXCEEDED, ABORTED, CANCELLED -> true;
                    default -> lvmKilled.get() || connectionLost;
                };
                if (!retryable) {
                    throw new Violation(code + ": " + e.getStatus().getDescription(), e);
                }
                if (System.nanoTime() > giveUp) {
                    throw new Violation("still " + code + " after " + GIVE_UP + ": " + e.getStatus().getDescription(), e);
                }
                synchronized (retried) {
                    retried.merge(code, 1, Integer::sum);
                }
                try {
                    TimeUnit.MILLISECONDS.sleep(backoff);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw new Violation("interrupted", interrupted);
                }
                backoff = Math.min(2000, backoff * 2);
            }
        }
    }

    private void awaitReady() throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        while (System.nanoTime() < deadline) {
            try {
                if (driver.client().identity().probe(Csi.ProbeRequest.getDefaultInstance()).getReady().getValue()) {
                    return;
                }
            } catch (StatusRuntimeException notYet) {
                // starting
            }
            TimeUnit.MILLISECONDS.sleep(100);
        }
        throw new AssertionError("the driver did not become ready within 2 minutes");
    }

    // ---- invariants ----

    private List<String> checkInvariants() throws Exception {
        List<String> wrong = new ArrayList<>();
        List<ChurnInvariants.Lv> lvs = ChurnInvariants.lvs(GuestEnv.volumeGroup());
        wrong.addAll(invariants.logicalVolumes(model, lvs));
        wrong.addAll(invariants.mounts(model));
        wrong.addAll(invariants.podLimits(model, pods, lvs));
        wrong.addAll(invariants.capacity(parameters -> retrying(c -> c.controller().getCapacity(
                Csi.GetCapacityRequest.newBuilder().putAllParameters(parameters).build()).getAvailableCapacity())));
        wrong.addAll(deviceMapperSettled());
        long rss = ChurnInvariants.rss(driver.process().process().pid());
        if (step == WARM_UP_STEPS) {
            rssBaseline = rss;
            System.out.println("churn: driver RSS after warm-up (" + WARM_UP_STEPS + " steps): " + rss / 1024 + " KiB");
        } else if (step > WARM_UP_STEPS) {
            invariantsRss(rss, wrong);
        }
        return wrong;
    }

    private void invariantsRss(long rss, List<String> wrong) {
        rssSamples++;
        rssMin = Math.min(rssMin, rss);
        rssMax = Math.max(rssMax, rss);
        if (rss > rssBaseline * (1 + RSS_SLACK)) {
            wrong.add("driver RSS " + rss / 1024 + " KiB, more than 10% over its " + rssBaseline / 1024
                    + " KiB after warm-up");
        }
    }

    /**
     * The device-mapper invariant; right after a restart the driver releases a metadata snapshot
     * that a killed run left held in its start-up thread, so a held one is looked at again for a
     * few seconds before it counts.
     */
    private List<String> deviceMapperSettled() throws InterruptedException {
        List<String> wrong = invariants.deviceMapper();
        for (int i = 0; i < 20 && !wrong.isEmpty(); i++) {
            TimeUnit.MILLISECONDS.sleep(500);
            wrong = invariants.deviceMapper();
        }
        return wrong;
    }

    // ---- the end ----

    /** Unpublishes, unstages and deletes everything the churn left, through the same retrying calls. */
    private void tearDown() {
        for (Volume v : List.copyOf(model.volumes.values())) {
            if (v.pod.isPresent()) {
                Csi.NodeUnpublishVolumeRequest request = Csi.NodeUnpublishVolumeRequest.newBuilder().setVolumeId(v.id)
                        .setTargetPath(v.target.orElseThrow().toString()).build();
                currentOp = "tear-down: unpublish " + v.name;
                retrying(c -> c.node().nodeUnpublishVolume(request));
                v.pod = Optional.empty();
                v.target = Optional.empty();
            }
            if (v.staging.isPresent()) {
                unstageCall(v).run();
            }
        }
        List.copyOf(model.snapshots.values()).forEach(s -> deleteSnapshotCall(s).run());
        List.copyOf(model.volumes.values()).forEach(v -> deleteCall(v).run());
    }

    private String report(long seconds, long churnNanos, String failure) {
        int ops = operations.values().stream().mapToInt(Integer::intValue).sum();
        StringBuilder md = new StringBuilder();
        md.append("| what | count |\n| --- | --- |\n");
        md.append("| seed | ").append(seed).append(" |\n");
        md.append("| churn time | ").append(Math.round(churnNanos / 1e9)).append(" s (asked ").append(seconds)
                .append(" s), ").append(pods.size()).append(" pods |\n");
        md.append("| steps (operations) | ").append(ops).append(" |\n");
        operations.forEach((op, n) -> md.append("| - ").append(op).append(" | ").append(n).append(" |\n"));
        md.append("| attempts retried, by status | ").append(retried.isEmpty() ? "none" : retried.toString()).append(" |\n");
        md.append("| driver SIGKILLed while a call was out | ").append(driverKillsMidCall).append(" |\n");
        md.append("| driver SIGKILLed between calls | ").append(driverKillsBetweenCalls).append(" |\n");
        md.append("| slowest exit of a SIGKILLed driver | ").append(slowestExitMillis).append(" ms |\n");
        md.append("| lvm child SIGKILLed during a call | ").append(lvmKills).append(" (").append(lvmKillsMissed)
                .append(" more calls ran no lvm that could be caught) |\n");
        md.append("| invariant checks | ").append(invariants.checks() + rssSamples).append(" |\n");
        md.append("| violations | ").append(failure == null ? 0 : 1).append(" |\n");
        md.append("| most volumes at once | ").append(maxLiveVolumes).append(" |\n");
        md.append("| driver RSS after warm-up | ").append(rssBaseline / 1024).append(" KiB; later min ")
                .append(rssSamples == 0 ? "-" : rssMin / 1024).append(", max ").append(rssMax / 1024)
                .append(" KiB over ").append(rssSamples).append(" samples |\n");
        if (failure != null) {
            md.append("\nViolation (replay with ").append(SEED_ENV).append('=').append(seed).append("): ")
                    .append(failure).append('\n');
        }
        return md.toString();
    }

    private static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
