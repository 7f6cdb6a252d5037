package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.guest.Csi2.expectCode;
import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lvmqos.e2e.CsiClient;
import io.lvmqos.e2e.DriverProcess;
import io.lvmqos.e2e.cri.Cri;
import io.lvmqos.e2e.guest.CriPods.Sandbox;
import io.lvmqos.e2e.guest.GuestPods.CgroupDriver;
import io.lvmqos.e2e.guest.GuestPods.Pod;
import io.lvmqos.e2e.guest.GuestPods.QosClass;
import io.lvmqos.e2e.guest.IoCostPods.Job;
import io.lvmqos.e2e.uml.GuestEnv;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * A node whose init is systemd, as most production nodes with cgroup v2 are: kubelet's systemd cgroup
 * driver and containerd's (SystemdCgroup true). systemd owns every cgroup here: the QoS and pod
 * slices are made over D-Bus with the properties kubelet's cgroup manager gives them
 * ({@link SystemdUnits}), runc asks systemd for each container's {@code cri-containerd-<id>.scope}
 * below its pod slice, and the driver itself runs in a scope of its own pod slice, with the
 * DaemonSet's arguments. Four pods hold volumes with two weights (8:1), a floor beside them in the
 * same QoS slice (which, with kubepods.slice, gets the driver's weights on the disk), and a cap in a
 * Guaranteed pod, directly below kubepods.slice: a cap is a most, and in the contended slice io.cost
 * would hold the capped pod below it by its share (it wrote 2.3 MiB/s under 4 there). After each thing
 * systemd, kubelet or the runtime does to those cgroups (a daemon-reload with a daemon-reexec, a resize's
 * set-property, a container restart, a containerd restart, the driver's restart, a sibling pod
 * coming and going), the pods' cgroup files are read and their rates measured: every limit must
 * still be there and hold. The figures go to the out dir as systemd-node.txt.
 *
 * <p>The disk's io.cost model is given as an operator gives it (--io-cost-model, the figures of
 * qemu's throttle) rather than measured: calibrating takes over a minute of emulation, and what is
 * under test is what systemd does to the files, which is the same for either kind of model.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
public class SystemdNodeCheck {

    private static final String NODE = "guest-node";
    private static final Path KUBELET = CriPods.KUBELET;
    private static final Path SOCKET = KUBELET.resolve("plugins/lvmqos.csi.io/csi.sock");
    private static final String GROUP = "lvmqos";
    /** The disk's model: qemu throttles it to this many requests a second, whatever their size or direction. */
    private static final int DISK_IOPS = 400;
    private static final String MODEL = "ctrl=user model=linear rbps=300000000 rseqiops=" + DISK_IOPS + " rrandiops="
            + DISK_IOPS + " wbps=290000000 wseqiops=" + DISK_IOPS + " wrandiops=" + DISK_IOPS;
    /**
     * Small enough to be what binds: in the contended disk the capped pod's io.cost share (a tenth,
     * beside the Burstable slice's weight) is worth about 2.4 MiB/s of the thin volume's 64 KiB
     * writes, so a cap of 4 MiB/s would be held below by io.cost, not by io.max (it was).
     */
    private static final long CAP = MIB;
    private static final int FLOOR = 100;
    private static final int SECONDS = 13;
    private static final long FILE_MIB = 32;

    private static final List<String> report = new ArrayList<>();
    private static GuestContainerd containerd;
    private static DriverProcess driver;
    private static CsiClient csi;
    private static int driverStarts;
    private static String driverSlice;
    private static String disk;
    private static String ioCostQos;
    private static String ioCostModel;
    private static final Map<String, Workload> workloads = new LinkedHashMap<>();

    /** A pod of the check: its slice, its sandbox and running container, its volume. */
    private static final class Workload {
        final String name;
        final Map<String, String> parameters;
        final Sandbox sandbox;
        final String slice;
        final Csi.Volume volume;
        final Path staging;
        final Path target;
        String container;

        Workload(String name, Map<String, String> parameters, Sandbox sandbox, String slice, Csi.Volume volume,
                 Path staging, Path target) {
            this.name = name;
            this.parameters = parameters;
            this.sandbox = sandbox;
            this.slice = slice;
            this.volume = volume;
            this.staging = staging;
            this.target = target;
        }

        Path cgroup() {
            return sandbox.pod().cgroup();
        }
    }

    @BeforeAll
    static void startNode() throws Exception {
        GuestEnv.assumeInGuest();
        assertTrue(GuestEnv.underSystemd(), "this check needs a guest whose init is systemd (QemuGuest.Builder.systemd)");
        assertEquals("systemd", Files.readString(Path.of("/proc/1/comm")).strip(), "PID 1");
        for (String dir : List.of("pods", "plugins", "plugins_registry")) {
            Files.createDirectories(KUBELET.resolve(dir));
        }
        // kubelet's QoS slices, as its QoS container manager makes them at start (BestEffort gets the
        // smallest CPU weight; Burstable's follows its pods' requests and is updated as they come and go)
        SystemdUnits.startSlice("kubepods.slice", "-.slice", new SystemdUnits.Properties().uint64("CPUWeight", 100));
        SystemdUnits.startSlice("kubepods-burstable.slice", "kubepods.slice",
                new SystemdUnits.Properties().uint64("CPUWeight", 100));
        SystemdUnits.startSlice("kubepods-besteffort.slice", "kubepods.slice",
                new SystemdUnits.Properties().uint64("CPUWeight", 1));
        containerd = GuestContainerd.startUnderSystemd(GuestEnv.disks().get(1));
        note("%s; %s; runc %s", SystemdUnits.version(), containerd.cri().runtime().version(Cri.VersionRequest
                .newBuilder().setVersion("v1").build()).getRuntimeVersion().strip(),
                ok("runc", "--version").lines().findFirst().orElse("").strip());

        driverSlice = podSlice(UUID.randomUUID().toString(), QosClass.BURSTABLE, new SystemdUnits.Properties()
                .uint64("CPUWeight", 4).uint64("MemoryMax", 192 * MIB));
        startDriver();
        disk = IoCostPods.wholeDiskOf(GuestEnv.disks().getFirst());
        ioCostQos = ioCostLine("io.cost.qos");
        ioCostModel = ioCostLine("io.cost.model");
        note("io.cost on %s: qos %s; model %s", disk, ioCostQos, ioCostModel);
        assertTrue(ioCostQos.contains("enable=1"), ioCostQos);

        workloads.put("heavy", workload("heavy", Map.of("ioWeight", "800"), QosClass.BURSTABLE));
        workloads.put("light", workload("light", Map.of("ioWeight", "100"), QosClass.BURSTABLE));
        workloads.put("floored", workload("floored", Map.of("iopsFloor", Integer.toString(FLOOR)), QosClass.BURSTABLE));
        workloads.put("capped", workload("capped", Map.of("writeBPS", Long.toString(CAP)), QosClass.GUARANTEED));
    }

    @AfterAll
    static void stopNode() throws Exception {
        if (!GuestEnv.inGuest()) {
            return;
        }
        Files.write(GuestEnv.outDir().resolve("systemd-node.txt"), report, StandardCharsets.UTF_8);
        for (Workload w : workloads.values()) {
            try {
                CriPods.remove(containerd.cri(), w.sandbox);
                Csi2.unpublishUnstageDelete(csi, w.volume.getVolumeId(), w.staging, List.of(w.target));
            } catch (RuntimeException e) {
                System.err.println("cleaning up " + w.name + ": " + e);
            }
        }
        if (csi != null) {
            csi.close();
        }
        if (driver != null) {
            System.out.println("driver log:\n" + driver.log());
            driver.terminate(Duration.ofSeconds(20));
        }
        if (containerd != null) {
            containerd.close();
        }
    }

    // --- the node's parts, made as kubelet, runc and the DaemonSet make them ---

    /** The cgroup of a pod's slice under kubelet's systemd layout. */
    private static Path podCgroup(String uid, QosClass qos) {
        return GuestPods.hierarchy().resolve(GuestPods.layout(uid, qos, CgroupDriver.SYSTEMD, ""));
    }

    /** A pod's slice, made as kubelet makes it; returns its unit name. */
    private static String podSlice(String uid, QosClass qos, SystemdUnits.Properties resources) {
        String path = GuestPods.layout(uid, qos, CgroupDriver.SYSTEMD, "");
        String[] slices = path.split("/");
        SystemdUnits.startSlice(slices[slices.length - 1], slices[slices.length - 2], resources);
        return slices[slices.length - 1];
    }

    /**
     * The driver with the DaemonSet's arguments, its container paths turned into the node's (its
     * socket directory, the host cgroup tree): in a scope of its own pod slice with Delegate=yes, as
     * runc would run its container. Not given: --watch-kubernetes (there is no API server here).
     * Given beside them: io.cost on the group with the operator's model.
     */
    private static void startDriver() throws Exception {
        DaemonSetPlugin plugin = DaemonSetPlugin.read("lvmqos", Map.of("NODE_NAME", NODE), Map.of());
        Map<String, String> hostPathOf = new LinkedHashMap<>();
        plugin.mounts().forEach(m -> hostPathOf.put(m.getContainerPath(), m.getHostPath()));
        List<String> args = new ArrayList<>();
        for (String arg : plugin.args()) {
            if (arg.startsWith("--endpoint=") || arg.equals("--watch-kubernetes")) {
                continue; // the endpoint is the socket below; no API server to watch
            }
            String value = arg.contains("=") ? arg.substring(arg.indexOf('=') + 1) : "";
            for (Map.Entry<String, String> mount : hostPathOf.entrySet()) {
                if (value.equals(mount.getKey()) || value.startsWith(mount.getKey() + "/")) {
                    arg = arg.substring(0, arg.indexOf('=') + 1) + mount.getValue() + value.substring(mount.getKey().length());
                }
            }
            args.add(arg);
        }
        args.addAll(List.of("--io-cost", GROUP, "--io-cost-model", GROUP + ":" + MODEL,
                // the DaemonSet gives the plugin an emptyDir at /tmp; the guest's /tmp is the host's
                "--lvm-shell-dir", "/run/lvmqos/tmp"));
        assertEquals(Path.of("/sys/fs/cgroup"), Path.of(value(args, "--cgroup-root")),
                "the DaemonSet's --cgroup-root, on the node: " + args);
        Files.createDirectories(SOCKET.getParent());
        Files.deleteIfExists(SOCKET);
        driverStarts++;
        List<String> scope = List.of("systemd-run", "--scope", "--quiet", "--unit=lvmqos-node-" + driverStarts + ".scope",
                "--slice=" + driverSlice, "--property=Delegate=yes");
        driver = DriverProcess.start(scope, SOCKET, GuestEnv.outDir().resolve("driver.log"),
                DriverProcess.shippedJvmFlags(), args.toArray(String[]::new));
        CsiClient.awaitSocket(SOCKET, Duration.ofSeconds(180));
        csi = CsiClient.connect(SOCKET);
        CriCheck.awaitReady(csi);
        String cgroup = Files.readString(Path.of("/proc", Long.toString(driver.process().pid()), "cgroup")).strip();
        assertTrue(cgroup.endsWith("/" + driverSlice + "/lvmqos-node-" + driverStarts + ".scope"),
                "the driver runs in its pod slice's scope: " + cgroup);
    }

    private static String value(List<String> args, String option) {
        return args.stream().filter(a -> a.startsWith(option + "=")).findFirst()
                .map(a -> a.substring(option.length() + 1)).orElseThrow(() -> new AssertionError("no " + option + " in " + args));
    }

    /**
     * A pod as kubelet starts it on this node: its slice, RunPodSandbox with the slice as cgroup
     * parent, the volume created, staged and published with kubelet's paths, a file laid out on it,
     * then a container (fio's image) that mounts it and idles until the rounds run fio in it.
     */
    private static Workload workload(String name, Map<String, String> parameters, QosClass qos) throws Exception {
        String uid = UUID.randomUUID().toString();
        String slice = podSlice(uid, qos, new SystemdUnits.Properties().uint64("CPUWeight", 10));
        Pod pod = new Pod(uid, podCgroup(uid, qos), qos, CgroupDriver.SYSTEMD);
        Sandbox sandbox = CriPods.run(containerd.cri(), name, "default", pod, slice, false);
        String pv = "pvc-" + name;
        Map<String, String> all = new LinkedHashMap<>(parameters);
        all.put("lvmType", "thin");
        Csi.Volume volume = csi.controller().createVolume(Csi2.create(pv, 256 * MIB, all).build()).getVolume();
        Path staging = CriCheck.stagingPath(volume.getVolumeId());
        Path target = sandbox.volumePath(pv);
        CriCheck.stageAndPublish(csi, volume, staging, uid, name, target);
        // written once from the node: reads of a thin volume's unwritten blocks never reach the disk
        ok("dd", "if=/dev/zero", "of=" + target.resolve("read"), "bs=1M", "count=" + FILE_MIB, "oflag=direct", "status=none");
        Workload workload = new Workload(name, parameters, sandbox, slice, volume, staging, target);
        startContainer(workload);
        return workload;
    }

    private static void startContainer(Workload w) {
        Cri.ContainerConfig.Builder idle = CriPods.container("fio", GuestContainerd.FIO_IMAGE,
                        List.of("/bin/sh", "-c", "exec sleep 100000"))
                .addMounts(Cri.Mount.newBuilder().setContainerPath("/data").setHostPath(w.target.toString())
                        .setPropagation(Cri.MountPropagation.PROPAGATION_PRIVATE));
        w.container = CriPods.start(containerd.cri(), w.sandbox, idle);
    }

    // --- what is read and measured after each action ---

    /** The pods' cgroup files and rates now; every limit must be in place and hold. */
    private static void expectLimitsHold(String after) throws Exception {
        Workload heavy = workloads.get("heavy");
        Workload light = workloads.get("light");
        Workload floored = workloads.get("floored");
        Workload capped = workloads.get("capped");
        String cappedLine = line(capped.cgroup().resolve("io.max"), NodeCheck.deviceNumberOf(capped.volume));
        String heavyWeight = IoCostPods.weightLine(heavy.cgroup(), disk);
        String lightWeight = IoCostPods.weightLine(light.cgroup(), disk);
        Path qosSlice = floored.cgroup().getParent();
        String flooredSliceWeight = IoCostPods.weightLine(qosSlice, disk);
        String qos = ioCostLine("io.cost.qos");
        String model = ioCostLine("io.cost.model");

        // two windows: the weights and the cap with the floored pod idle, then the floor against the
        // weighted pods (its weight would leave them too few operations for a steady ratio)
        List<Double> shares = IoCostPods.rates(List.of(randomReads(heavy), randomReads(light), sequentialWrites(capped)),
                SECONDS);
        List<Double> floor = IoCostPods.rates(List.of(randomReads(floored), randomReads(heavy), randomReads(light)),
                SECONDS);
        List<Double> rates = List.of(shares.get(0), shares.get(1), floor.get(0), shares.get(2));
        double ratio = rates.get(0) / rates.get(1);
        note("after %s: io.max of capped [%s]; io.weight heavy %s, light %s, floored %s, %s %s, kubepods.slice %s; rates: heavy %.0f IOPS,"
                        + " light %.0f IOPS (ratio %.2f, asked 8), capped %.2f MiB/s (cap %d MiB/s); floored %.0f IOPS"
                        + " (floor %d) against heavy %.0f and light %.0f", after, cappedLine, heavyWeight, lightWeight,
                IoCostPods.weightLine(floored.cgroup(), disk), qosSlice.getFileName(), flooredSliceWeight,
                IoCostPods.weightLine(qosSlice.getParent(), disk), rates.get(0), rates.get(1), ratio, rates.get(3), CAP / MIB, rates.get(2), FLOOR, floor.get(1),
                floor.get(2));

        assertTrue(cappedLine != null && cappedLine.contains("wbps=" + CAP), after + ": capped pod's io.max " + cappedLine);
        assertEquals("800", heavyWeight, after + ": the heavy pod's io.weight on " + disk);
        assertEquals("100", lightWeight, after + ": the light pod's io.weight on " + disk);
        assertTrue(flooredSliceWeight != null, after + ": the floored pod's QoS slice has no weight on " + disk);
        assertTrue(IoCostPods.weightLine(floored.cgroup(), disk) != null, after + ": the floored pod has no weight on " + disk);
        assertEquals(ioCostQos, qos, after + ": io.cost.qos");
        assertEquals(ioCostModel, model, after + ": io.cost.model");
        assertTrue(Math.abs(rates.get(3) - CAP / (double) MIB) <= 0.10 * CAP / MIB, after + ": capped pod wrote "
                + rates.get(3) + " MiB/s under a cap of " + CAP / MIB);
        assertTrue(Math.abs(ratio - 8) <= 8 * 0.15, after + ": ratio " + ratio + " for weights 8:1: " + rates);
        assertTrue(rates.get(2) >= 0.9 * FLOOR, after + ": the floored pod got " + rates.get(2) + " IOPS");
    }

    private static Job randomReads(Workload w) {
        return fioJob(w, List.of("--rw=randread", "--bs=4k", "--filename=/data/read", "--size=" + FILE_MIB + "M",
                "--readonly"));
    }

    /** 64 KiB writes over a file laid out before: the thin pool's chunk, so each write is one request on the disk. */
    private static Job sequentialWrites(Workload w) {
        return fioJob(w, List.of("--rw=write", "--bs=64k", "--filename=/data/read", "--size=" + FILE_MIB + "M"));
    }

    /** fio in the pod's running container, through CRI's ExecSync as kubectl exec goes; counted on its pod slice. */
    private static Job fioJob(Workload w, List<String> pattern) {
        List<String> fio = new ArrayList<>(List.of("fio", "--output-format=json", "--name=" + w.name, "--direct=1",
                "--ioengine=libaio", "--iodepth=16", "--time_based", "--runtime=" + SECONDS, "--ramp_time=2"));
        fio.addAll(pattern);
        String container = w.container;
        // a thread of its own for each: the jobs must run at once, and the common pool of a
        // two-CPU guest runs one task at a time
        return new Job(fio, Optional.of(w.cgroup()), disk, argv -> CompletableFuture.supplyAsync(() -> {
            Cri.ExecSyncResponse done = CriPods.execSync(containerd.cri(), container, SECONDS + 60, argv);
            String out = done.getStdout().toStringUtf8();
            assertEquals(0, done.getExitCode(), out + done.getStderr().toStringUtf8());
            return out;
        }, task -> Thread.ofPlatform().name("fio-" + w.name).start(task)));
    }

    /** The file's line for the device, or null. */
    private static String line(Path file, String device) throws IOException {
        if (!Files.exists(file)) {
            return null;
        }
        return Files.readAllLines(file).stream().filter(l -> l.startsWith(device + " ")).findFirst().orElse(null);
    }

    private static String ioCostLine(String file) throws IOException {
        String found = line(GuestEnv.cgroupRoot().resolve(file), disk);
        assertTrue(found != null, "no line for " + disk + " in the root's " + file);
        return found;
    }

    private static void note(String format, Object... args) {
        String line = String.format(Locale.ROOT, format, args);
        System.out.println("systemd node: " + line);
        report.add(line);
    }

    // --- the actions ---

    @Test
    @Order(1)
    void theLimitsHoldOnPodsSystemdAndRuncMade() throws Exception {
        Workload capped = workloads.get("capped");
        long pid = CriPods.pid(containerd.cri(), capped.container);
        String containerCgroup = CriPods.cgroupOf(pid, "");
        note("capped pod's container cgroup: %s", containerCgroup);
        assertTrue(containerCgroup.endsWith("/" + capped.slice + "/cri-containerd-" + capped.container + ".scope"),
                "runc asked systemd for the container's scope in the pod slice: " + containerCgroup);
        expectLimitsHold("the pods' start");
    }

    @Test
    @Order(2)
    void aDaemonReloadAndAReexecKeepThem() throws Exception {
        ok("systemctl", "daemon-reload");
        ok("systemctl", "daemon-reexec");
        expectLimitsHold("systemctl daemon-reload and daemon-reexec");
    }

    @Test
    @Order(3)
    void anInPlaceResizeOfThePodAndItsQosSliceKeepsThem() throws Exception {
        // what kubelet does on an in-place resize: SetUnitProperties on the pod slice, then on the QoS slice
        Workload heavy = workloads.get("heavy");
        ok("systemctl", "set-property", "--runtime", heavy.slice, "CPUWeight=20", "MemoryMax=512M");
        ok("systemctl", "set-property", "--runtime", "kubepods-burstable.slice", "CPUWeight=120");
        expectLimitsHold("set-property of " + heavy.slice + " and kubepods-burstable.slice");
    }

    @Test
    @Order(4)
    void aContainerRestartKeepsThem() throws Exception {
        for (Workload w : workloads.values()) {
            containerd.cri().runtime().stopContainer(Cri.StopContainerRequest.newBuilder().setContainerId(w.container)
                    .setTimeout(2).build());
            containerd.cri().runtime().removeContainer(Cri.RemoveContainerRequest.newBuilder()
                    .setContainerId(w.container).build());
            startContainer(w);
        }
        expectLimitsHold("every pod's container restarted");
    }

    @Test
    @Order(5)
    void aContainerdRestartKeepsThem() throws Exception {
        containerd.restartUnderSystemd();
        expectLimitsHold("systemctl restart of containerd");
    }

    @Test
    @Order(6)
    void theDriversRestartKeepsThem() throws Exception {
        csi.close();
        int exit = driver.terminate(Duration.ofSeconds(30));
        note("the driver exited with %d on SIGTERM", exit);
        startDriver();
        expectLimitsHold("the driver's restart");
    }

    @Test
    @Order(7)
    void aSiblingPodComingAndGoingKeepsThem() throws Exception {
        String uid = UUID.randomUUID().toString();
        String slice = podSlice(uid, QosClass.BURSTABLE, new SystemdUnits.Properties().uint64("CPUWeight", 10));
        Pod pod = new Pod(uid, podCgroup(uid, QosClass.BURSTABLE), QosClass.BURSTABLE, CgroupDriver.SYSTEMD);
        Sandbox sibling = CriPods.run(containerd.cri(), "sibling", "default", pod, slice, false);
        CriPods.start(containerd.cri(), sibling, CriPods.container("idle", GuestContainerd.FIO_IMAGE,
                List.of("/bin/sh", "-c", "exec sleep 100000")));
        containerd.cri().runtime().stopPodSandbox(Cri.StopPodSandboxRequest.newBuilder().setPodSandboxId(sibling.id()).build());
        containerd.cri().runtime().removePodSandbox(Cri.RemovePodSandboxRequest.newBuilder().setPodSandboxId(sibling.id()).build());
        SystemdUnits.stopUnit(slice);
        assertFalse(Files.exists(pod.cgroup()), "systemd removed the sibling's slice");
        expectLimitsHold("a sibling pod started and removed");
    }

    // --- failures around the publish ---

    /** A Burstable pod's slice and a volume with a 4 MiB/s cap, created but not yet staged or published. */
    private record Unpublished(String uid, String slice, Path cgroup, Csi.Volume volume, Path staging, Path target) {
    }

    private static Unpublished unpublished(String pv) throws Exception {
        String uid = UUID.randomUUID().toString();
        String slice = podSlice(uid, QosClass.BURSTABLE, new SystemdUnits.Properties().uint64("CPUWeight", 10));
        Csi.Volume volume = csi.controller().createVolume(Csi2.create(pv, 64 * MIB,
                Map.of("lvmType", "thin", "writeBPS", "4Mi")).build()).getVolume();
        Path target = KUBELET.resolve("pods").resolve(uid).resolve("volumes/kubernetes.io~csi").resolve(pv).resolve("mount");
        return new Unpublished(uid, slice, podCgroup(uid, QosClass.BURSTABLE), volume,
                CriCheck.stagingPath(volume.getVolumeId()), target);
    }

    /**
     * The pod's slice gone before the publish reaches it (the pod deleted meanwhile): UNAVAILABLE,
     * which kubelet retries, nothing mounted at the target and no limit written anywhere.
     */
    @Test
    @Order(8)
    void aPodSliceSystemdRemovedIsAnsweredUnavailableAndNothingIsLeft() throws Exception {
        Unpublished gone = unpublished("pvc-gone");
        String uid = gone.uid();
        Csi.Volume volume = gone.volume();
        Path staging = gone.staging();
        Path target = gone.target();
        try {
            csi.node().nodeStageVolume(Csi.NodeStageVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                    .setStagingTargetPath(staging.toString()).setVolumeCapability(Csi2.mount())
                    .putAllVolumeContext(volume.getVolumeContextMap()).build());
            SystemdUnits.stopUnit(gone.slice());
            assertFalse(Files.exists(gone.cgroup()), "systemd removed the slice's cgroup");
            StatusRuntimeException refused = expectCode(Status.Code.UNAVAILABLE, () -> csi.node().nodePublishVolume(
                    CriCheck.publishRequest(volume, staging, uid, "gone", target)));
            note("publish into a pod whose slice systemd removed: %s", refused.getStatus().getDescription());
            assertTrue(refused.getStatus().getDescription().contains(uid), refused.getStatus().getDescription());
            assertFalse(ok("cat", "/proc/self/mountinfo").contains(" " + target + " "), "nothing mounted at the target");
            String device = NodeCheck.deviceNumberOf(volume);
            try (var files = Files.walk(GuestPods.hierarchy().resolve("kubepods.slice"))) {
                for (Path ioMax : files.filter(f -> f.getFileName().toString().equals("io.max")).toList()) {
                    assertEquals(null, line(ioMax, device), "a limit for the volume's device in " + ioMax);
                }
            }
        } finally {
            Csi2.unpublishUnstageDelete(csi, volume.getVolumeId(), staging, List.of(target));
        }
    }

    /** containerd restarting while kubelet publishes: the publish does not need it, and its limit is in place. */
    @Test
    @Order(9)
    void aPublishDuringAContainerdRestartSucceedsWithItsLimit() throws Exception {
        Unpublished restarting = unpublished("pvc-restart");
        Csi.Volume volume = restarting.volume();
        Path staging = restarting.staging();
        Path target = restarting.target();
        try {
            CompletableFuture<Void> restart = CompletableFuture.runAsync(() -> {
                try {
                    containerd.restartUnderSystemd();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            CriCheck.stageAndPublish(csi, volume, staging, restarting.uid(), "restart", target);
            restart.get(2, TimeUnit.MINUTES);
            String device = NodeCheck.deviceNumberOf(volume);
            String limit = line(restarting.cgroup().resolve("io.max"), device);
            note("publish during a containerd restart: io.max [%s]", limit);
            assertTrue(limit != null && limit.contains("wbps=" + 4 * MIB), "the pod slice's io.max: " + limit);
        } finally {
            Csi2.unpublishUnstageDelete(csi, volume.getVolumeId(), staging, List.of(target));
            SystemdUnits.stopUnit(restarting.slice());
        }
    }
}
