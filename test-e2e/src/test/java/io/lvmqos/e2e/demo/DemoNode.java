package io.lvmqos.e2e.demo;

import static io.lvmqos.e2e.uml.GuestCommand.ok;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import csi.v1.Csi;
import io.lvmqos.e2e.CsiClient;
import io.lvmqos.e2e.demo.DemoPod.QosClass;
import io.lvmqos.e2e.demo.QosTable.Limit;
import io.lvmqos.e2e.guest.DriverForTheClass;
import io.lvmqos.e2e.guest.GuestContainerd;
import io.lvmqos.e2e.guest.GuestDriver;
import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The guest side of ./demo: inside a user-mode-Linux node, plays what Kubernetes does for three
 * PVCs over the driver's CSI socket, measures each pod's I/O with fio, prints the table, undoes
 * everything and checks that the node is clean. Exits non-zero when a limit is missed, the
 * unlimited volume is not clearly faster, or anything is left behind.
 */
public final class DemoNode {

    static final String DRIVER = "lvmqos.csi.io";
    /** The external-provisioner's CSI-prefixed keys it adds with --extra-create-metadata. */
    static final String PVC_NAME = "csi.storage.k8s.io/pvc/name";
    static final String PVC_NAMESPACE = "csi.storage.k8s.io/pvc/namespace";
    static final String PV_NAME = "csi.storage.k8s.io/pv/name";
    /** The key the provisioner adds to every PV's volumeAttributes; kubelet passes it back on stage and publish. */
    static final String PROVISIONER_IDENTITY = "storage.kubernetes.io/csiProvisionerIdentity";

    private static final ObjectMapper JSON = new ObjectMapper();

    /** A StorageClass of the demo: its parameters as the provisioner passes them, and the limits io.max should get. */
    private record StorageClass(String name, Map<String, String> parameters, List<Limit> limits, QosClass podQos,
                                List<FioJob> jobs) {
        String shown() {
            return parameters.isEmpty() ? "no limits"
                    : parameters.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(","));
        }
    }

    /** A PVC through its life: what was created, staged and published, so that it can be undone. */
    private static final class Claim {
        final String pvc;
        final String pvName = "pvc-" + UUID.randomUUID();
        final StorageClass storageClass;
        final String podName;
        Csi.Volume volume;
        Map<String, String> volumeAttributes;
        String device;
        PodOnNode pod;
        Path staging;
        Path target;
        boolean staged;
        boolean published;
        String ioMaxAfterPublish = "";
        String podMountinfo = "";

        Claim(String pvc, StorageClass storageClass, String podName) {
            this.pvc = pvc;
            this.storageClass = storageClass;
            this.podName = podName;
        }
    }

    private final DemoOptions options;
    private final List<Claim> claims = new ArrayList<>();
    private final List<String> failures = new ArrayList<>();
    private final QosTable table = new QosTable();
    private GuestDriver driver;
    private GuestContainerd containerd;
    private Csi.Topology topology;

    private DemoNode(DemoOptions options) {
        this.options = options;
    }

    public static void main(String[] args) {
        DemoOptions options = DemoOptions.parse(List.of(args));
        DemoNode demo = new DemoNode(options);
        int exit;
        try {
            exit = demo.run();
        } catch (Exception | AssertionError e) {
            say("");
            say("demo stopped: " + e);
            saveStackTrace(e);
            demo.abandon();
            say("node not checked for leftovers: the demo stopped early, and undid what it had made as far as it could");
            exit = 1;
        }
        System.out.flush();
        System.exit(exit);
    }

    private int run() throws Exception {
        List<StorageClass> classes = List.of(
                new StorageClass("demo-bps", ordered("readBPS", options.bps().text(), "writeBPS", options.bps().text()),
                        List.of(new Limit("wbps", options.bps().value()), new Limit("rbps", options.bps().value())),
                        QosClass.BURSTABLE, List.of(FioJob.SEQ_WRITE, FioJob.SEQ_READ)),
                new StorageClass("demo-iops", ordered("iops", options.iops().text()),
                        List.of(new Limit("wiops", options.iops().value()), new Limit("riops", options.iops().value())),
                        QosClass.GUARANTEED, List.of(FioJob.RAND_WRITE, FioJob.RAND_READ)),
                new StorageClass("demo-unlimited", Map.of(), List.of(), QosClass.BEST_EFFORT,
                        List.of(FioJob.SEQ_WRITE, FioJob.SEQ_READ, FioJob.RAND_WRITE, FioJob.RAND_READ)));
        claims.add(new Claim("data-bps", classes.get(0), "bps-pod"));
        claims.add(new Claim("data-iops", classes.get(1), "iops-pod"));
        claims.add(new Claim("data-free", classes.get(2), "free-pod"));

        startDriver();
        startContainerd();
        createVolumes();
        stageAndPublish();
        measure();
        report();
        undo();
        return failures.isEmpty() ? 0 : 1;
    }

    // --- the driver ---

    private void startDriver() throws Exception {
        // the node plugin's container: a mount namespace of its own whose kubelet directory stays
        // shared with the node's, as mountPropagation: Bidirectional makes it
        // the demo is a program, not a check: no JUnit life cycle closes this driver, the demo does
        driver = new DriverForTheClass().behind(List.of("unshare", "--mount", "--propagation", "unchanged"))
                .startedBySetUp().start();
        Csi.GetPluginInfoResponse info = driver.client().identity().getPluginInfo(Csi.GetPluginInfoRequest.getDefaultInstance());
        Csi.NodeGetInfoResponse node = driver.client().node().nodeGetInfo(Csi.NodeGetInfoRequest.getDefaultInstance());
        topology = node.getAccessibleTopology();
        String vg = GuestEnv.volumeGroup();
        long vgMebibytes = Math.round(Double.parseDouble(ok("lvm", "vgs", "--noheadings", "--nosuffix", "--units", "m",
                "-o", "vg_size", vg).strip()));
        say("node:   %s, Linux %s (user-mode), volume group %s of %d MiB on the sparse file, cgroup v2 with io",
                node.getNodeId(), ok("uname", "-r").strip(), vg, vgMebibytes);
        say("driver: %s %s, pid %d in a mount namespace of its own, kubelet dir %s shared with the node (Bidirectional)",
                info.getName(), info.getVendorVersion(), driver.process().process().pid(), GuestDriver.KUBELET);
        say("        CSI socket %s; topology %s", GuestDriver.SOCKET, topology.getSegmentsMap());
    }

    /**
     * The first pod is a real one: containerd with its CRI plugin and runc, the demo playing kubelet over
     * CRI. Its images are scripts/build-image's, imported now from the host's target/image.
     */
    private void startContainerd() throws Exception {
        containerd = GuestContainerd.startForFio(GuestEnv.disks().get(1));
        say("runtime: containerd %s with its CRI plugin and runc, cgroupfs driver, for %s; the other pods are the"
                + " test bed's imitation of kubelet", containerd.cri().runtime().version(io.lvmqos.e2e.cri.Cri.VersionRequest
                        .newBuilder().setVersion("v1").build()).getRuntimeVersion(), claims.getFirst().podName);
    }

    private PodOnNode startPod(Claim claim) throws Exception {
        return claim == claims.getFirst() ? ContainerdPod.start(containerd.cri(), claim.podName, claim.storageClass.podQos())
                : DemoPod.start(claim.podName, claim.storageClass.podQos());
    }

    private CsiClient csi() {
        return driver.client();
    }

    // --- 1. provisioning ---

    private void createVolumes() {
        say("");
        say("1. CreateVolume, as the external-provisioner calls it for a PVC (ReadWriteOnce, %s, ext4)", options.size().text());
        // the driver advertises SINGLE_NODE_MULTI_WRITER, so the provisioner and kubelet both pass
        // ReadWriteOnce as SINGLE_NODE_MULTI_WRITER (and ReadWriteOncePod as SINGLE_NODE_SINGLE_WRITER)
        Csi.VolumeCapability capability = capability();
        for (Claim claim : claims) {
            Map<String, String> parameters = new LinkedHashMap<>(claim.storageClass.parameters());
            parameters.put(PVC_NAME, claim.pvc);
            parameters.put(PVC_NAMESPACE, DemoPod.NAMESPACE);
            parameters.put(PV_NAME, claim.pvName);
            claim.volume = csi().controller().createVolume(Csi.CreateVolumeRequest.newBuilder()
                    .setName(claim.pvName)
                    .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(options.size().value()))
                    .addVolumeCapabilities(capability)
                    .putAllParameters(parameters)
                    // WaitForFirstConsumer: the scheduler picked this node
                    .setAccessibilityRequirements(Csi.TopologyRequirement.newBuilder()
                            .addRequisite(topology).addPreferred(topology))
                    .build()).getVolume();
            // the provisioner keeps the volume context as the PV's volumeAttributes, adding its own identity
            claim.volumeAttributes = new TreeMap<>(claim.volume.getVolumeContextMap());
            claim.volumeAttributes.put(PROVISIONER_IDENTITY, "1700000000000-1234-" + DRIVER);
            claim.device = deviceNumber(claim.volume);
            say("   %-9s  StorageClass %s (%s), PV %s", claim.pvc, claim.storageClass.name(),
                    claim.storageClass.shown(), claim.pvName);
            say("   %-9s  -> %s, %d MiB, device %s", "", claim.volume.getVolumeId(),
                    claim.volume.getCapacityBytes() >> 20, claim.device);
            say("   %-9s     volume_context %s", "", claim.volume.getVolumeContextMap().isEmpty() ? "{}"
                    : new TreeMap<>(claim.volume.getVolumeContextMap()));
        }
    }

    private static Csi.VolumeCapability capability() {
        return Csi.VolumeCapability.newBuilder()
                .setMount(Csi.VolumeCapability.MountVolume.newBuilder().setFsType("ext4"))
                .setAccessMode(Csi.VolumeCapability.AccessMode.newBuilder()
                        .setMode(Csi.VolumeCapability.AccessMode.Mode.SINGLE_NODE_MULTI_WRITER))
                .build();
    }

    // --- 2. stage and publish into pods ---

    private void stageAndPublish() throws Exception {
        say("");
        say("2. NodeStageVolume and NodePublishVolume, as kubelet calls them for a pod (podInfoOnMount: true)");
        say("   volume_context: the PV's attributes; on publish also csi.storage.k8s.io/pod.name, pod.namespace,");
        say("   pod.uid, serviceAccount.name and ephemeral=false");
        for (Claim claim : claims) {
            claim.pod = startPod(claim);
            claim.staging = GuestDriver.KUBELET.resolve("plugins/kubernetes.io/csi").resolve(DRIVER)
                    .resolve(sha256(claim.volume.getVolumeId())).resolve("globalmount");
            claim.target = claim.pod.volumePath(claim.pvName);
            say("   %s (%s, uid %s)", claim.pod.name(), claim.pod.qos().display(), claim.pod.uid());
            say("      cgroup    %s", claim.pod.cgroupName());
            if (claim.pod instanceof DemoPod imitation) {
                say("      sandbox   pid %d in a container cgroup of the pod, its mount namespace made now: rslave (HostToContainer)",
                        imitation.sandboxPid());
            } else if (claim.pod instanceof ContainerdPod real) {
                say("      sandbox   %s: RunPodSandbox on containerd, cgroup_parent the pod cgroup, the node's network",
                        real.sandboxId().substring(0, 12));
            }
            say("                sees a mount at the target before the publish: %s",
                    claim.pod.mountinfoLine(claim.target).isPresent() ? "yes" : "no");

            Files.createDirectories(claim.staging.getParent());
            csi().node().nodeStageVolume(Csi.NodeStageVolumeRequest.newBuilder()
                    .setVolumeId(claim.volume.getVolumeId())
                    .setStagingTargetPath(claim.staging.toString())
                    .setVolumeCapability(capability())
                    .putAllVolumeContext(claim.volumeAttributes)
                    .build());
            claim.staged = true;
            say("      staged    %s", claim.staging);

            Map<String, String> context = new TreeMap<>(claim.volumeAttributes);
            context.put("csi.storage.k8s.io/pod.name", claim.pod.name());
            context.put("csi.storage.k8s.io/pod.namespace", DemoPod.NAMESPACE);
            context.put("csi.storage.k8s.io/pod.uid", claim.pod.uid());
            context.put("csi.storage.k8s.io/serviceAccount.name", "default");
            context.put("csi.storage.k8s.io/ephemeral", "false");
            Files.createDirectories(claim.target.getParent());
            csi().node().nodePublishVolume(Csi.NodePublishVolumeRequest.newBuilder()
                    .setVolumeId(claim.volume.getVolumeId())
                    .setStagingTargetPath(claim.staging.toString())
                    .setTargetPath(claim.target.toString())
                    .setVolumeCapability(capability())
                    .setReadonly(false)
                    .putAllVolumeContext(context)
                    .build());
            claim.published = true;
            say("      published %s", claim.target);

            // the limit must be in the pod cgroup before any container of the pod can write
            claim.ioMaxAfterPublish = claim.pod.ioMax();
            claim.pod.volumePublished(claim.target);
            claim.podMountinfo = claim.pod.mountinfoLine(claim.target).orElse("");
            if (claim.pod instanceof ContainerdPod real) {
                String containerCgroup = real.containerCgroup();
                say("      container CreateContainer and StartContainer (image %s), the target mounted at %s;"
                        + " runc made its cgroup %s", GuestContainerd.FIO_IMAGE, ContainerdPod.VOLUME_IN_CONTAINER,
                        containerCgroup);
                say("      the container sees it: %s", claim.podMountinfo.isEmpty() ? "NO" : "yes");
                if (!containerCgroup.startsWith("/" + claim.pod.cgroupName() + "/")) {
                    failures.add("runc put " + claim.pod.name() + "'s container in " + containerCgroup
                            + ", not below the pod cgroup " + claim.pod.cgroupName());
                }
            } else {
                say("      the pod sees it now, by propagation alone: %s", claim.podMountinfo.isEmpty() ? "NO" : "yes");
            }
            if (claim.podMountinfo.isEmpty()) {
                failures.add(claim.pod.name() + " does not see " + claim.target + " after the publish");
            }
            checkIoMax(claim);
        }
    }

    /** io.max holds exactly the StorageClass's limits for the volume's device, or no line when it has none. */
    private void checkIoMax(Claim claim) {
        Optional<String> line = lineFor(claim.ioMaxAfterPublish, claim.device);
        if (claim.storageClass.limits().isEmpty()) {
            line.ifPresent(l -> failures.add(claim.pvc + " has no limits but " + claim.pod.name() + "'s io.max has " + l));
            return;
        }
        if (line.isEmpty()) {
            failures.add(claim.pvc + ": no io.max line for " + claim.device + " in " + claim.pod.cgroupName());
            return;
        }
        List<String> fields = List.of(line.get().split("\\s+"));
        for (Limit limit : claim.storageClass.limits()) {
            String expected = limit.ioMaxKey() + "=" + (long) limit.value();
            if (!fields.contains(expected)) {
                failures.add(claim.pvc + ": io.max has \"" + line.get() + "\", expected " + expected);
            }
        }
    }

    // --- 3. fio in the pods ---

    private void measure() {
        long mebibytes = options.fileMebibytes();
        say("");
        say("3. fio --direct=1 in each pod (containerd: by ExecSync in its container; imitation: a container cgroup made now,"
                + " below the pod's, and the pod's mount namespace):"
                + " %d s per run after a %d s ramp,"
                + " writes and reads in separate runs", options.runtimeSeconds(), FioJob.RAMP_SECONDS);
        for (Claim claim : claims) {
            // laid out from outside the pod's cgroup, at full speed: a read must find real blocks
            claim.pod.execUnlimited(Duration.ofMinutes(2), List.of("dd", "if=/dev/zero",
                    "of=" + claim.target.resolve("fio.data"), "bs=1M",
                    "count=" + mebibytes, "oflag=direct", "status=none")).requireSuccess();
            for (FioJob job : claim.storageClass.jobs()) {
                Optional<Limit> limit = claim.storageClass.limits().stream()
                        .filter(l -> l.ioMaxKey().startsWith(job.direction().substring(0, 1))
                                && l.ioMaxKey().endsWith(job.bandwidth() ? "bps" : "iops"))
                        .findFirst();
                QosTable.Row row = fio(claim, job, claim.pod.inPod(claim.target).resolve("fio.data"), mebibytes, limit);
                table.add(row);
                say("   %-9s  %-13s  %8.1f IOPS  %8.2f MiB/s", claim.pvc, job.label(), row.iops(),
                        row.bytesPerSecond() / (1 << 20));
            }
        }
    }

    private QosTable.Row fio(Claim claim, FioJob job, Path file, long mebibytes, Optional<Limit> limit) {
        GuestCommand.Result result = claim.pod.exec(Duration.ofSeconds(options.runtimeSeconds() + 90),
                job.argv(file, mebibytes, options.runtimeSeconds())).requireSuccess();
        String out = result.stdout();
        JsonNode figures;
        try {
            figures = JSON.readTree(out.substring(out.indexOf('{'))).path("jobs").get(0).path(job.direction());
        } catch (IOException | StringIndexOutOfBoundsException e) {
            throw new IllegalStateException("fio printed no JSON report: " + result, e);
        }
        try {
            Files.writeString(GuestEnv.outDir().resolve("fio-" + claim.pvc + "-" + job.name().toLowerCase(java.util.Locale.ROOT)
                    + ".json"), out);
        } catch (IOException e) {
            // the report is for a human after a failure; the figures are what matter here
        }
        return new QosTable.Row(claim.pvc, claim.storageClass.name(), claim.pod.runtime(), job, limit,
                figures.path("iops").asDouble(), figures.path("bw_bytes").asDouble());
    }

    // --- 4. the report ---

    private void report() {
        say("");
        say("4. What each pod got");
        table.render().forEach(line -> say("   " + line));
        say("   ratio: measured / limit; for the unlimited volume, measured / the limited volume's figure with the same job");
        failures.addAll(table.failures());
        if (table.failures().isEmpty()) {
            say("   every limited figure is within %d%% of its limit, and the unlimited volume is at least %d times as fast",
                    Math.round(100 * QosTable.TOLERANCE), Math.round(QosTable.MIN_SPEEDUP));
        }
        say("");
        say("   io.max written by NodePublishVolume, in each pod's cgroup (step 2):");
        for (Claim claim : claims) {
            Optional<String> line = lineFor(claim.ioMaxAfterPublish, claim.device);
            say("   %-9s  %s", claim.pod.name(), line.orElse("(no line for " + claim.device + ": the volume has no limits)"));
        }
        say("");
        say("   each pod's view of its volume (mountinfo of its container's, or the imitation's, mount namespace):");
        for (Claim claim : claims) {
            say("   %-9s  %s", claim.pod.name(), claim.podMountinfo.isEmpty() ? "(not visible)" : claim.podMountinfo);
        }
        if (!failures.isEmpty()) {
            say("");
            failures.forEach(failure -> say("   FAIL: " + failure));
        }
    }

    // --- 5. undo, and check that nothing is left ---

    private void undo() throws Exception {
        say("");
        say("5. NodeUnpublishVolume, NodeUnstageVolume, DeleteVolume");
        for (Claim claim : claims) {
            if (claim.pod instanceof ContainerdPod) {
                say("   %-9s  StopContainer and RemoveContainer first, as kubelet does before it unmounts a pod's volumes",
                        claim.pvc);
            }
            claim.pod.stopContainers();
            Optional<String> ioMaxBefore = lineFor(claim.pod.ioMax(), claim.device);
            unpublish(claim);
            boolean podSeesIt = claim.pod.mountinfoLine(claim.target).isPresent();
            IoMaxAtUnpublish ioMax = new IoMaxAtUnpublish(ioMaxBefore, lineFor(claim.pod.ioMax(), claim.device),
                    !claim.storageClass.limits().isEmpty());
            if (podSeesIt) {
                failures.add(claim.pod.name() + " still sees " + claim.target + " after the unpublish");
            }
            ioMax.failure().ifPresent(failure -> failures.add(claim.pod.name() + "'s io.max " + failure));
            unstage(claim);
            say("   %-9s  unpublished (gone from %s: %s; io.max line for %s: %s), unstaged", claim.pvc,
                    claim.pod.name(), podSeesIt ? "NO" : "yes", claim.device, ioMax.shown());
        }
        // while the devices still exist: a line the driver forgot would still be in io.max now
        List<String> ioMaxLeft = ioMaxLinesFor(claims.stream().map(c -> c.device).toList());
        for (Claim claim : claims) {
            csi().controller().deleteVolume(Csi.DeleteVolumeRequest.newBuilder()
                    .setVolumeId(claim.volume.getVolumeId()).build());
            claim.volume = null;
            say("   %-9s  deleted (%s)", claim.pvc, claim.pvName);
        }
        List<String> left = new ArrayList<>(leftovers());
        ioMaxLeft.forEach(line -> left.add("io.max line " + line));
        for (Claim claim : claims) {
            claim.pod.close();
        }
        driver.close();
        driver = null;
        containerd.close();
        containerd = null;
        failures.addAll(left);
        String devices = claims.stream().map(c -> c.device).collect(Collectors.joining(", "));
        say("");
        if (left.isEmpty()) {
            say("node clean: no LV tagged lvmqos.*, no mount under %s (node, driver and the imitation's %d pod"
                    + " namespaces), no io.max line for %s in any cgroup", GuestDriver.KUBELET,
                    claims.stream().filter(c -> c.pod instanceof DemoPod).count(), devices);
        } else {
            say("node NOT clean: %s", String.join("; ", left));
        }
    }

    private void unpublish(Claim claim) throws IOException {
        if (claim.published) {
            csi().node().nodeUnpublishVolume(Csi.NodeUnpublishVolumeRequest.newBuilder()
                    .setVolumeId(claim.volume.getVolumeId()).setTargetPath(claim.target.toString()).build());
            claim.published = false;
            // kubelet removes the volume's directory and, with the pod, the pod's directory
            deleteUpTo(claim.target, GuestDriver.KUBELET.resolve("pods"));
        }
    }

    private void unstage(Claim claim) throws IOException {
        if (claim.staged) {
            csi().node().nodeUnstageVolume(Csi.NodeUnstageVolumeRequest.newBuilder()
                    .setVolumeId(claim.volume.getVolumeId()).setStagingTargetPath(claim.staging.toString()).build());
            claim.staged = false;
            deleteUpTo(claim.staging, claim.staging.getParent().getParent());
        }
    }

    /** Empty directories from {@code dir} up to, not including, {@code stop}: what kubelet cleans up. */
    private static void deleteUpTo(Path dir, Path stop) throws IOException {
        for (Path p = dir; p != null && p.startsWith(stop) && !p.equals(stop); p = p.getParent()) {
            if (!Files.isDirectory(p)) {
                continue;
            }
            try (Stream<Path> entries = Files.list(p)) {
                if (entries.findAny().isPresent()) {
                    return;
                }
            }
            Files.delete(p);
        }
    }

    /** LVs, mounts and io.max lines of the demo's volumes that are still there; empty when the node is clean. */
    private List<String> leftovers() throws IOException {
        List<String> left = new ArrayList<>();
        JsonNode lvs = JSON.readTree(ok("lvm", "lvs", "--reportformat", "json", "-o", "vg_name,lv_name,lv_tags"));
        for (JsonNode lv : lvs.path("report").get(0).path("lv")) {
            if (Stream.of(lv.path("lv_tags").asText().split(",")).anyMatch(tag -> tag.startsWith("lvmqos."))) {
                left.add("LV " + lv.path("vg_name").asText() + "/" + lv.path("lv_name").asText());
            }
        }
        Map<String, String> namespaces = new LinkedHashMap<>();
        namespaces.put("node", Files.readString(Path.of("/proc/self/mountinfo")));
        namespaces.put("driver", ok("nsenter", "--target", Long.toString(driver.process().process().pid()), "--mount",
                "--", "cat", "/proc/self/mountinfo"));
        for (Claim claim : claims) {
            namespaces.put(claim.pod.name(), claim.pod.mountinfo());
        }
        namespaces.forEach((where, mountinfo) -> Mountinfo.mountsBelow(mountinfo, GuestDriver.KUBELET)
                .forEach(point -> left.add("mount " + point + " (" + where + ")")));
        ioMaxLinesFor(claims.stream().map(c -> c.device).toList()).forEach(line -> left.add("io.max line " + line));
        return left;
    }

    /** Every io.max line in the cgroup tree for one of these devices, with the cgroup it is in. */
    private static List<String> ioMaxLinesFor(List<String> devices) throws IOException {
        Path root = GuestEnv.cgroupRoot();
        List<String> found = new ArrayList<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : files.filter(f -> f.getFileName() != null && f.getFileName().toString().equals("io.max")).toList()) {
                String text;
                try {
                    text = Files.readString(file);
                } catch (IOException vanished) {
                    continue;
                }
                for (String device : devices) {
                    lineFor(text, device).ifPresent(line -> found.add("\"" + line + "\" in " + root.relativize(file)));
                }
            }
        }
        return found;
    }

    /** After a failure: undo what was done, as far as it goes, so that the guest halts with nothing mounted. */
    private void abandon() {
        for (Claim claim : claims) {
            try {
                if (claim.pod != null) {
                    claim.pod.stopContainers();
                }
                if (driver != null && claim.volume != null) {
                    unpublish(claim);
                    unstage(claim);
                    csi().controller().deleteVolume(Csi.DeleteVolumeRequest.newBuilder()
                            .setVolumeId(claim.volume.getVolumeId()).build());
                }
                if (claim.pod != null) {
                    claim.pod.close();
                }
            } catch (Exception | AssertionError e) {
                say("   (clean-up of %s: %s)", claim.pvc, e.getMessage());
            }
        }
        say("driver log: %s", driverLog());
        try {
            if (driver != null) {
                driver.close();
            }
        } catch (Exception e) {
            say("   (stopping the driver: %s)", e.getMessage());
        }
        try {
            if (containerd != null) {
                containerd.close();
            }
        } catch (Exception e) {
            say("   (stopping containerd: %s)", e.getMessage());
        }
    }

    private String driverLog() {
        try (Stream<Path> logs = Files.list(GuestEnv.outDir())) {
            return logs.filter(p -> p.getFileName().toString().startsWith("driver-")).map(Path::toString)
                    .collect(Collectors.joining(" "));
        } catch (IOException e) {
            return GuestEnv.outDir().toString();
        }
    }

    // --- helpers ---

    private static void saveStackTrace(Throwable failure) {
        Path file = GuestEnv.outDir().resolve("demo-failure.txt");
        try (java.io.PrintWriter writer = new java.io.PrintWriter(Files.newBufferedWriter(file))) {
            failure.printStackTrace(writer);
            say("        (stack trace in %s)", file);
        } catch (IOException | RuntimeException e) {
            failure.printStackTrace(System.out);
        }
    }

    private static Optional<String> lineFor(String ioMax, String device) {
        return ioMax.lines().filter(line -> line.startsWith(device + " ")).findFirst();
    }

    /** The volume's device number, {@code MAJ:MIN}, as io.max names it. */
    private static String deviceNumber(Csi.Volume volume) {
        String[] id = volume.getVolumeId().split("/");
        String[] hex = ok("stat", "-L", "-c", "%t:%T", "/dev/" + id[2] + "/" + id[3]).strip().split(":");
        return Integer.parseInt(hex[0], 16) + ":" + Integer.parseInt(hex[1], 16);
    }

    /** kubelet names a volume's staging directory by the SHA-256 of its volume handle. */
    private static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Map<String, String> ordered(String... keysAndValues) {
        Map<String, String> map = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            map.put(keysAndValues[i], keysAndValues[i + 1]);
        }
        return map;
    }

    private static void say(String format, Object... args) {
        System.out.println(args.length == 0 ? format : String.format(java.util.Locale.ROOT, format, args));
        System.out.flush();
    }
}
