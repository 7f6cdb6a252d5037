package io.lvmqos.server;

import io.grpc.BindableService;
import io.lvmqos.cgroup.CgroupLimitsWriter;
import io.lvmqos.cgroup.CgroupLimitsWriters;
import io.lvmqos.cgroup.ContainerCgroupWatcher;
import io.lvmqos.cgroup.IoCost;
import io.lvmqos.cgroup.IoWeights;
import io.lvmqos.cgroup.PodCgroups;
import io.lvmqos.controller.ControllerService;
import io.lvmqos.controller.QosModifier;
import io.lvmqos.controller.ResumableWipe;
import io.lvmqos.controller.VolumeProvisioner;
import io.lvmqos.device.BackingDisks;
import io.lvmqos.device.BlockDeviceProbe;
import io.lvmqos.device.DeviceNumber;
import io.lvmqos.device.Filesystems;
import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.CommandRunner;
import io.lvmqos.group.GroupControllerService;
import io.lvmqos.group.GroupSnapshots;
import io.lvmqos.guarantee.FloorWatch;
import io.lvmqos.guarantee.IoCostEnabler;
import io.lvmqos.guarantee.IoCostModels;
import io.lvmqos.guarantee.PodShares;
import io.lvmqos.identity.HealthCheck;
import io.lvmqos.identity.IdentityService;
import io.lvmqos.kube.VolumeAttributesWatcher;
import io.lvmqos.kube.VolumeModifier;
import io.lvmqos.lvm.DeviceMapperName;
import io.lvmqos.lvm.DeviceWiper;
import io.lvmqos.lvm.Lvm;
import io.lvmqos.metadata.SnapshotMetadataReader;
import io.lvmqos.metadata.SnapshotMetadataService;
import io.lvmqos.metadata.ThinPoolMetadata;
import io.lvmqos.metrics.MetricsServer;
import io.lvmqos.metrics.SysBlock;
import io.lvmqos.mount.KubeletPaths;
import io.lvmqos.mount.MountTable;
import io.lvmqos.mount.Mounter;
import io.lvmqos.node.DeviceMountPoints;
import io.lvmqos.node.ActiveDevices;
import io.lvmqos.node.ExpandFlow;
import io.lvmqos.node.NodeService;
import io.lvmqos.node.PublishFlow;
import io.lvmqos.node.StageFlow;
import io.lvmqos.node.PodLimits;
import io.lvmqos.node.Publishes;
import io.lvmqos.node.VolumeConditions;
import io.lvmqos.node.VolumeStats;
import io.lvmqos.volume.GuaranteePolicy;
import io.lvmqos.volume.KeyedLocks;
import io.lvmqos.volume.LvmNames;
import io.lvmqos.volume.ManagedVolume;
import io.lvmqos.volume.PodLimitsApplier;
import io.lvmqos.volume.ThinPoolSpace;
import io.lvmqos.volume.VolumeCatalog;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Wires the services together and runs the server until SIGTERM. */
public final class Driver {

    private static final Logger log = LoggerFactory.getLogger(Driver.class);
    private static final Duration SHUTDOWN_GRACE = Duration.ofSeconds(10);
    private static final Duration HEALTH_PERIOD = Duration.ofSeconds(10);

    private Driver() {
    }

    public static void run(DriverSettings settings) throws Exception {
        CommandRunner runner = new CommandRunner(Map.of(), CallDeadlines::ofCurrentCall);
        Lvm lvm = settings.lvmShellDir().map(dir -> Lvm.withShells(runner, dir)).orElseGet(() -> Lvm.onThisHost(runner));
        HealthCheck health = new HealthCheck(lvm::volumeGroupOutOfTurn, settings.volumeGroups(),
                settings.probeLvmTimeout());
        VolumeCatalog catalog = new VolumeCatalog(lvm, settings.nodeId(), settings.volumeGroups());
        KeyedLocks locks = new KeyedLocks(() -> runner.callDeadline().remaining());
        MountTable mountTable = new MountTable();
        Files.createDirectories(settings.kubeletDir());
        KubeletPaths kubeletPaths = new KubeletPaths(settings.kubeletDir(), settings.driverName(), mountTable);
        kubeletPaths.propagation().problem().ifPresent(health::misconfigured);
        PodCgroups podCgroups = new PodCgroups(settings.cgroupRoot());
        CgroupLimitsWriter limitsWriter = CgroupLimitsWriters.forNode(settings.cgroupRoot());
        ContainerCgroupWatcher containerWatcher = new ContainerCgroupWatcher(limitsWriter::copyPodLimits);
        SysBlock sysBlock = new SysBlock(Path.of("/sys"));
        PodLimits podLimits = new PodLimits(podCgroups, limitsWriter, containerWatcher, mountTable,
                kubeletPaths.root(), Path.of("/dev"), device -> sysBlock.dmName(device)
                        .flatMap(DeviceMapperName::parse)
                        .filter(dm -> settings.volumeGroups().contains(dm.volumeGroup())
                                && LvmNames.isVolumeLvName(dm.logicalVolume()))
                        .isPresent());
        VolumeConditions conditions = new VolumeConditions();
        BackingDisks backingDisks = new BackingDisks(Path.of("/sys"));
        IoCost ioCost = new IoCost(settings.cgroupRoot());
        IoCostModels models = new IoCostModels(lvm, backingDisks, ioCost, Path.of("/sys"));
        GuaranteePolicy guarantees = new IoCostEnabler(ioCost, models)
                .enable(settings.ioCost().asked(), podCgroups::mode, settings.cgroupRoot());
        FloorWatch floorWatch = new FloorWatch(FloorWatch.cgroupFs(Path.of("/sys"), System::nanoTime));
        PodShares podShares = new PodShares(catalog, podLimits, podCgroups, mountTable,
                new IoWeights(settings.cgroupRoot()), ioCost, backingDisks, guarantees, floorWatch);
        // the controller and the node are one process: a change of limits reaches the pods directly
        PodLimitsApplier pods = volume -> {
            podLimits.applyToPodsUsing(volume);
            podShares.applyToPodsUsing(volume);
        };
        VolumeProvisioner provisioner = new VolumeProvisioner(lvm,
                new ResumableWipe(DeviceWiper.onThisHost(runner)::zero, ResumableWipe.Clock.SYSTEM,
                        settings.wipeBytesPerSecond()), catalog, locks,
                new DeviceMountPoints(mountTable), pods, guarantees, runner::callDeadline);
        QosModifier qos = new QosModifier(lvm, catalog, locks, pods, guarantees);
        Mounter mounter = Mounter.create(mountTable, kubeletPaths);
        Filesystems filesystems = new Filesystems(runner);
        ActiveDevices devices = new ActiveDevices(lvm);
        NodeService node = new NodeService(catalog, kubeletPaths, mounter,
                new VolumeStats(runner, conditions, new ThinPoolSpace(lvm), floorWatch::unmet), locks,
                new StageFlow(kubeletPaths, mounter, mountTable, BlockDeviceProbe.onThisHost(runner), filesystems, devices),
                new PublishFlow(kubeletPaths, mounter, mountTable, podLimits,
                        new Publishes(kubeletPaths, mounter, mountTable, Path.of("/dev")), podShares, devices),
                new ExpandFlow(catalog, lvm, filesystems, podLimits));
        GroupSnapshots groupSnapshots = new GroupSnapshots(lvm, mountTable, kubeletPaths, mounter, runner, locks,
                settings.nodeId(), settings.volumeGroups());
        SnapshotMetadataReader snapshotMetadata = new SnapshotMetadataReader(lvm, ThinPoolMetadata.onThisHost(runner),
                settings.nodeId(), settings.volumeGroups());
        List<BindableService> services = List.of(
                new IdentityService(settings.driverName(), settings.version(), health),
                new ControllerService(provisioner, qos, settings.watchKubernetes()),
                node,
                new SnapshotMetadataService(snapshotMetadata),
                new GroupControllerService(groupSnapshots));
        // before the socket: an address that cannot be bound stops the start, loudly
        Optional<MetricsServer> metrics = settings.metricsAddress().isEmpty() ? Optional.empty()
                : Optional.of(MetricsServer.start(settings.metricsAddress().get(), catalog, lvm, mountTable,
                        kubeletPaths.root(), podCgroups, conditions, guarantees, floorWatch::unmetByGroup));
        // a call's change waits until the start thread below has finished the pools a kill or power cut left half sent
        lvm.holdChangesForStartCheck();
        UnixSocketServer server = UnixSocketServer.start(settings.socket(), services);
        log.info("lvmqos {} serving {} on {} for node {}, volume groups {}", settings.version(), settings.driverName(),
                settings.socket(), settings.nodeId(), settings.volumeGroups());
        log.debug("one mount is looked up by {}", mountTable.lookup());
        AutoCloseable watcher = settings.watchKubernetes() ? watchKubernetes(settings, qos) : () -> { };
        // After the socket, and one lvm at a time: Probe answers ready from the start (the health
        // check's verdict starts ready), so nothing here stands before it, but with hundreds of LVs
        // each vgs/lvs takes seconds of a small node's CPU, and the health check, the catalog's
        // index and the metrics' first report used to run at once, slowing the first answers.
        // The health check first (a missing VG turns Probe not ready at once; a held lock does by
        // its own bound while this thread waits), then the cgroup v1 limits, which must reach
        // containers made since the last run, then the index, and the metrics' report last.
        Thread.ofPlatform().daemon().name("startup").start(() -> {
            health.check();
            health.start(HEALTH_PERIOD, HEALTH_PERIOD);
            try {
                podLimits.resume();
            } catch (RuntimeException e) {
                log.warn("could not resume the pods' cgroup v1 limits at start: {}", e.getMessage());
            }
            // before anything reads a volume (after the v1 limits, which need no lvm and must not wait
            // on a held VG lock): a killed run's lvm may have left a device suspended
            lvm.checkingAtStart(() -> resumeAndFinishPools(lvm, settings.volumeGroups()));
            List<ManagedVolume> indexed = List.of();
            try {
                indexed = catalog.reload();
            } catch (RuntimeException e) {
                log.warn("could not index volumes at start: {}", e.getMessage());
            }
            // from the volumes just read: what a killed run left frozen or reserved, with no lvm of their own
            try {
                groupSnapshots.thawLeftFrozen(indexed);
            } catch (RuntimeException e) {
                log.warn("could not thaw filesystems that group snapshots left frozen: {}", e.getMessage());
            }
            try {
                lvm.thinPools().releaseStaleSnapshots(indexed.stream().map(ManagedVolume::lv).toList());
            } catch (RuntimeException e) {
                log.warn("could not release thin pools' metadata snapshots left held: {}", e.getMessage());
            }
            metrics.ifPresent(MetricsServer::startLvmReport);
            // after the index: the floors it holds are what the weights are worked out from
            podShares.start();
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            log.info("stopping: finishing calls in progress (at most {} s, then lvm commands still running get "
                    + "SIGTERM and time to complete)", SHUTDOWN_GRACE.toSeconds());
            try {
                watcher.close();
            } catch (Exception e) {
                log.warn("could not stop watching Kubernetes: {}", e.toString());
            }
            try {
                server.shutdown(SHUTDOWN_GRACE);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            health.close();
            containerWatcher.close();
            podShares.close();
            metrics.ifPresent(MetricsServer::close);
            lvm.closeShells();
        }, "shutdown"));
        server.awaitTermination();
    }

    /**
     * Resumes the devices a killed lvm left suspended, and finishes the thin pool changes a killed
     * lvm or a power cut left half sent, each group on its own: one that fails is logged. A
     * thin snapshot's lvm suspends the origin around the pool's messages; a power cut leaves nothing
     * suspended and nothing active, and a node's boot may activate the pool without sending the
     * messages LVM still queues. Either way lvm's first removal in the pool would fail and leave a
     * device LVM no longer records. Two lvs per group (suspended LVs, then the pools' record), and for
     * each pool a dmsetup status, or for an inactive pool a read-only activation of its metadata LV,
     * a thin_dump without mappings and the deactivation.
     */
    private static void resumeAndFinishPools(Lvm lvm, List<String> volumeGroups) {
        for (String vg : volumeGroups) {
            try {
                List<String> resumed = lvm.resumeSuspended(vg);
                for (String name : resumed) {
                    log.warn("resumed LV {}/{}: its device was left suspended, as an lvm killed inside a change "
                            + "leaves it, and every I/O to it waited", vg, name);
                }
                lvm.finishHalfSentPoolChanges(vg);
            } catch (RuntimeException e) {
                log.warn("could not resume suspended LVs of volume group {}, or finish its thin pools' changes: {}", vg,
                        e.getMessage());
            }
        }
    }

    /**
     * A method of its own, so that the watcher's classes are loaded only when the flag is on. A
     * watch that cannot be set up (no API server named, a CA that cannot be read) is logged as an
     * error and left off: the node's own calls, publish and its limits, do not need it, and a plugin
     * that exited for it would take them down with it. Changes of VolumeAttributesClass made on
     * another node then do not reach this node's volumes until the plugin starts with a working watch.
     */
    private static AutoCloseable watchKubernetes(DriverSettings settings, QosModifier qos) {
        VolumeAttributesWatcher watcher;
        try {
            watcher = VolumeAttributesWatcher.inCluster(settings.driverName(), settings.nodeId(), VolumeModifier.of(qos));
        } catch (IllegalStateException | java.io.UncheckedIOException e) {
            log.error("--watch-kubernetes is on, but the watch cannot start, and is left off: {}. A VolumeAttributesClass"
                    + " change made through another node's plugin will not reach this node's volumes until this plugin"
                    + " restarts with an API server it can reach", e.getMessage());
            return () -> { };
        }
        watcher.start();
        return watcher;
    }
}
