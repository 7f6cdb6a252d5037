package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.lvmqos.e2e.guest.GuestPods.CgroupDriver;
import io.lvmqos.e2e.guest.GuestPods.Pod;
import io.lvmqos.e2e.guest.GuestPods.QosClass;
import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Crash states the way file-system developers make them ({@code CrashStatesIT}, issue 41): the volume
 * group's only PV is a dm-log-writes device over the first disk, logging to the second, so every write
 * lvm, the thin pool and the file systems make reaches the log in the order the disk made it durable,
 * with its flush and FUA. {@link CrashWorkload} drives the driver through a seeded workload and marks
 * the log after each answer. Then the log is replayed onto the third disk, state by state, to each
 * sampled flush point; each state is looked at through a throw-away dm snapshot (its changes go to the
 * fourth disk), so checking one state changes nothing the next is replayed onto. At each state:
 * vgck and thin_check pass, or lvm's documented repair ({@code vgck --updatemetadata},
 * {@code lvconvert --repair}) makes them pass and the state counts as repaired; the driver starts
 * and Probe says ready; the LVs are exactly those the last answered step left, with exactly its tags,
 * but for the step in flight, whose LVs may be either way and whose retry must then leave exactly
 * what it promised (an LV no step names fails the state); every volume ListVolumes must list is
 * listed; a staged volume stages and publishes again, every file whose fsync returned reads back its
 * checksum, and the pod's io.max carries the limit last promised.
 *
 * <p>Which flush points: {@value #STATES_ENV} {@code all}, or a number: the last point, and a seeded
 * sample of the rest, half of it among points that end a stretch writing lvm's metadata area (below
 * the PV's first extent); or {@code step:N}, every point while step N was in flight (with the seed of
 * the run that failed there: a seed's steps are the same each run, its log's entries are not). The
 * seed ({@value #SEED_ENV}) chooses the workload's values and order too.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
public class CrashStatesCheck {
    static final String SEED_ENV = "LVMQOS_CRASH_SEED";
    static final String STATES_ENV = "LVMQOS_CRASH_STATES";
    /** {@value #STATES_ENV} {@code step:8}: every flush point while step 8 was in flight. */
    static final String IN_FLIGHT = "step:";
    static final String REPORT = "crash-report";
    private static final String DATA = "/dev/ubda";
    private static final String LOG = "/dev/ubdb";
    private static final String SCRATCH = "/dev/ubdc";
    private static final String COW = "/dev/ubdd";
    private static final String STATE_DEVICE = "crash-state";

    @RegisterExtension
    static final DriverForTheClass driver = new DriverForTheClass().startedByEachTest();

    private final RebootJournal journal = new RebootJournal(GuestEnv.outDir().resolve("crash-journal"));
    private final String vg = GuestEnv.volumeGroup();
    private final long seed = Long.parseLong(System.getenv(SEED_ENV));

    @Test
    @Order(1)
    void aSeededWorkloadOnALoggedVolumeGroup() throws Exception {
        String sectors = ok("blockdev", "--getsz", DATA).strip();
        ok("dmsetup", "create", CrashWorkload.LOG_DEVICE, "--table",
                "0 " + sectors + " log-writes " + DATA + " " + LOG);
        // without udev, dmsetup makes no /dev/mapper node, and lvm finds a PV by that name only
        ok("dmsetup", "mknodes", CrashWorkload.LOG_DEVICE);
        String pv = "/dev/mapper/" + CrashWorkload.LOG_DEVICE;
        keepLvmOffTheDisks();
        ok("lvm", "pvcreate", "-q", "-y", pv);
        ok("lvm", "vgcreate", "-q", vg, pv);
        ok("lvm", "lvcreate", "-q", "-y", "--type", "thin-pool", "-Z", "y", "-L", "512M", "-n",
                GuestEnv.thinPool().orElseThrow(), vg);
        journal.append("layout", ok("lvm", "pvs", "--noheadings", "--units", "b", "--nosuffix", "-o", "pe_start", pv)
                .strip());
        CrashWorkload.setUpDone(journal, vg);
        try (GuestDriver running = driver.start()) {
            new CrashWorkload(running.client(), seed, journal).run();
        }
        ok("lvm", "vgchange", "-q", "-an", vg);
        // removing the target logs its last writes and a final mark, and writes the log's super
        ok("dmsetup", "remove", CrashWorkload.LOG_DEVICE);
    }

    @Test
    @Order(2)
    void everySampledStateComesBack() throws Exception {
        keepLvmOffTheDisks();
        long peStart = Long.parseLong(journal.entries("layout").getFirst().getFirst());
        Map<Integer, Map<String, String>> lvsAfter = new HashMap<>();
        journal.entries("lvs").forEach(words -> lvsAfter.put(Integer.parseInt(words.getFirst()), lvTags(words)));
        String sectors = ok("blockdev", "--getsz", SCRATCH).strip();
        int checked = 0;
        int repaired = 0;
        List<String> failed = new ArrayList<>();
        try (WriteLog log = WriteLog.open(Path.of(LOG));
             FileChannel scratch = FileChannel.open(Path.of(SCRATCH), StandardOpenOption.WRITE)) {
            Steps steps = Steps.of(log, lvsAfter.size());
            Sample sample = sample(log, steps, peStart);
            System.out.println("crash states: " + sample);
            int replayed = 0;
            Set<Integer> failedSteps = new TreeSet<>();
            for (int point : sample.points()) {
                log.replay(replayed, point + 1, scratch);
                scratch.force(true);
                replayed = point + 1;
                ok("dmsetup", "create", STATE_DEVICE, "--table",
                        "0 " + sectors + " snapshot " + SCRATCH + " " + COW + " N 8");
                ok("dmsetup", "mknodes", STATE_DEVICE);
                try {
                    if (checkState(point, steps.at(point), lvsAfter)) {
                        repaired++;
                    }
                } catch (AssertionError | Exception e) {
                    String what = "state at log entry " + point + " (" + steps.at(point) + "): " + e;
                    failed.add(what);
                    steps.at(point).inFlight().ifPresent(failedSteps::add);
                    System.out.println("FAILED " + what);
                } finally {
                    tearDownState();
                }
                checked++;
            }
            String report = String.format("crash states: %d checked, %d needed repair, %d failed (seed %d, %s)",
                    checked, repaired, failed.size(), seed, sample)
                    + failedSteps.stream().map(step -> "; replay step " + step + "'s states with -Dcrash.seed=" + seed
                    + " -Dcrash.states=" + IN_FLIGHT + step).collect(Collectors.joining());
            System.out.println(report);
            Files.writeString(GuestEnv.outDir().resolve(REPORT), report + "\n");
        }
        assertEquals(List.of(), failed, "states the driver or lvm mishandled");
    }

    /** Which steps had started and answered before a point of the log, read from its marks. */
    record Steps(Map<String, Integer> marks, int count) {
        static Steps of(WriteLog log, int count) {
            Map<String, Integer> marks = new HashMap<>();
            log.entries().forEach(e -> e.mark().ifPresent(name -> marks.putIfAbsent(name, e.index())));
            for (int n = 0; n < count; n++) {
                assertTrue(marks.containsKey("s" + n) && marks.containsKey("d" + n), "the log holds both marks of step " + n);
            }
            return new Steps(marks, count);
        }

        /** The state at {@code point}: the last step answered, and the step in flight, if one was. */
        State at(int point) {
            int done = -1;
            Optional<Integer> inFlight = Optional.empty();
            for (int n = 0; n < count; n++) {
                if (marks.get("d" + n) < point) {
                    done = n;
                } else if (marks.get("s" + n) < point) {
                    inFlight = Optional.of(n);
                }
            }
            return new State(done, inFlight);
        }
    }

    record State(int done, Optional<Integer> inFlight) {
    }

    /** The flush points to check, in log order. */
    record Sample(List<Integer> points, int flushPoints, int metadataPoints, String which) {
        @Override
        public String toString() {
            return which + ": " + points.size() + " of " + flushPoints + " flush points after set-up, "
                    + metadataPoints + " of those inside lvm metadata writes";
        }
    }

    private Sample sample(WriteLog log, Steps steps, long peStart) {
        int after = steps.marks().get("d0");
        List<Integer> metadata = new ArrayList<>();
        List<Integer> other = new ArrayList<>();
        boolean touchedMetadata = false;
        for (WriteLog.Entry entry : log.entries()) {
            touchedMetadata |= entry.writesBelow(peStart, log.blockSize());
            if (entry.isFlushPoint()) {
                if (entry.index() > after) {
                    (touchedMetadata ? metadata : other).add(entry.index());
                }
                touchedMetadata = false;
            }
        }
        int total = metadata.size() + other.size();
        String wanted = Optional.ofNullable(System.getenv(STATES_ENV)).orElse("6");
        TreeSet<Integer> points = new TreeSet<>();
        if (wanted.equals("all")) {
            points.addAll(metadata);
            points.addAll(other);
        } else if (wanted.startsWith(IN_FLIGHT)) {
            // every point while one step was in flight: the write log's entries differ from run to
            // run, but a seed's steps do not, so this replays the states a failed run named by step
            int step = Integer.parseInt(wanted.substring(IN_FLIGHT.length()).strip());
            Stream.concat(metadata.stream(), other.stream())
                    .filter(point -> steps.at(point).inFlight().equals(Optional.of(step)))
                    .forEach(points::add);
            assertTrue(!points.isEmpty(), "no flush point of this seed's log has step " + step + " in flight");
        } else {
            int n = Integer.parseInt(wanted);
            Random random = new Random(seed);
            List<Integer> metadataOrder = new ArrayList<>(metadata);
            List<Integer> otherOrder = new ArrayList<>(other);
            Collections.shuffle(metadataOrder, random);
            Collections.shuffle(otherOrder, random);
            // the last point, then half from the metadata points, the rest from the others, then whatever is left
            List<Integer> order = new ArrayList<>();
            Stream.concat(metadata.stream(), other.stream()).max(Comparator.naturalOrder()).ifPresent(order::add);
            int fromMetadata = Math.min(metadataOrder.size(), n / 2);
            order.addAll(metadataOrder.subList(0, fromMetadata));
            order.addAll(otherOrder);
            order.addAll(metadataOrder.subList(fromMetadata, metadataOrder.size()));
            for (Iterator<Integer> next = order.iterator(); points.size() < n && next.hasNext(); ) {
                points.add(next.next());
            }
        }
        return new Sample(List.copyOf(points), total, metadata.size(),
                wanted.equals("all") || wanted.startsWith(IN_FLIGHT) ? wanted : "sample of " + wanted + " with seed " + seed);
    }

    /**
     * Checks one state; true if it needed lvm's repair. The state's device is {@value #STATE_DEVICE},
     * the only one lvm sees; nothing of it is active.
     */
    private boolean checkState(int point, State state, Map<Integer, Map<String, String>> lvsAfter) throws Exception {
        boolean repaired = false;
        if (!GuestCommand.run("lvm", "vgck", vg).succeeded()) {
            // vgck(8): --updatemetadata rewrites metadata that is valid but inconsistent or damaged on a PV
            ok("lvm", "vgck", "--updatemetadata", vg);
            ok("lvm", "vgck", vg);
            repaired = true;
        }
        if (!thinCheckPasses()) {
            // lvmthin(7): a pool whose metadata thin_check refuses is repaired with lvconvert --repair
            ok("lvm", "lvconvert", "-y", "--repair", vg + "/" + GuestEnv.thinPool().orElseThrow());
            assertTrue(thinCheckPasses(), "thin_check passes after lvconvert --repair");
            repaired = true;
        }
        Map<String, String> promised = lvsAfter.get(state.done());
        Map<String, String> found = CrashWorkload.userLvTags(vg);
        try (GuestDriver running = driver.start()) {
            Csi.ProbeResponse probe = running.client().identity().probe(Csi.ProbeRequest.getDefaultInstance());
            assertTrue(!probe.hasReady() || probe.getReady().getValue(), "Probe: ready " + probe);
            if (state.inFlight().isPresent()) {
                int n = state.inFlight().get();
                Map<String, String> next = lvsAfter.get(n);
                for (String lv : found.keySet()) {
                    assertTrue(promised.containsKey(lv) || next.containsKey(lv), "LV " + lv + " (tags "
                            + found.get(lv) + ") is named by neither step " + state.done() + " nor step " + n
                            + " in flight");
                }
                // a step in flight may leave marks of its own on the LVs it works on (a group snapshot's
                // freezing tag); what it keeps of the promise must be there, and its retry must clear the rest
                for (String lv : promised.keySet()) {
                    if (next.containsKey(lv)) {
                        Set<String> kept = tagSet(promised.get(lv));
                        kept.retainAll(tagSet(next.get(lv)));
                        assertTrue(found.containsKey(lv) && tagSet(found.get(lv)).containsAll(kept), "LV " + lv
                                + ", which step " + n + " in flight keeps, is there with the tags " + kept
                                + " of step " + state.done() + ": " + found.get(lv));
                    }
                }
                retry(running, n);
                promised = next;
            }
            found = awaitLvs(promised);
            assertEquals(promised, found, "the LVs and tags the last answered step left"
                    + state.inFlight().map(n -> ", and its retry of step " + n).orElse(""));
            Set<String> listed = running.client().controller().listVolumes(Csi.ListVolumesRequest.getDefaultInstance())
                    .getEntriesList().stream().map(e -> Csi2.lvName(e.getVolume().getVolumeId()))
                    .collect(Collectors.toSet());
            Set<String> volumes = promised.keySet().stream().filter(io.lvmqos.volume.LvmNames::isVolumeLvName)
                    .collect(Collectors.toSet());
            assertEquals(volumes, listed, "ListVolumes lists every volume LV");
            publishAgain(running, state);
        }
        System.out.printf("state at log entry %d: step %d answered%s, %d LVs%s%n", point, state.done(),
                state.inFlight().map(n -> ", step " + n + " in flight and retried").orElse(""), promised.size(),
                repaired ? ", repaired" : "");
        return repaired;
    }

    /**
     * The LVs and their tags once they are {@code promised}, or after 30 s as they are then: the driver
     * clears what a cut-short call left (a group snapshot's freezing tag) in its start-up, which runs
     * beside its first calls.
     */
    private Map<String, String> awaitLvs(Map<String, String> promised) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        Map<String, String> found = CrashWorkload.userLvTags(vg);
        while (!found.equals(promised) && System.nanoTime() < deadline) {
            Thread.sleep(200);
            found = CrashWorkload.userLvTags(vg);
        }
        return found;
    }

    /** The step in flight sent again, as its sidecar would after the node came back; node steps are not retried. */
    private void retry(GuestDriver running, int n) throws Exception {
        for (List<String> op : journal.entries("op")) {
            if (Integer.parseInt(op.get(0)) == n) {
                CrashOp.valueOf(op.get(1)).retry(running.client(), op.get(2));
            }
        }
    }

    /**
     * kubelet after the node came back: a new pod cgroup, stage and publish with the paths it had; then
     * every file whose fsync had returned reads back its checksum and io.max has the last promised limit.
     * Also after the workload's own unpublish: a later pod publishes the volume the same way.
     */
    private void publishAgain(GuestDriver running, State state) throws Exception {
        Optional<List<String>> staged = journal.entries("staged").stream()
                .filter(s -> Integer.parseInt(s.get(0)) <= state.done()).findFirst();
        if (staged.isEmpty()) {
            return; // never staged before this point: no file to read, no limit to restore
        }
        String id = staged.get().get(1);
        Path stagingPath = Path.of(staged.get().get(2));
        Path target = Path.of(staged.get().get(3));
        Pod pod = GuestPods.create(UUID.randomUUID().toString(), QosClass.BURSTABLE, CgroupDriver.SYSTEMD, "");
        try {
            running.client().node().nodeStageVolume(Csi.NodeStageVolumeRequest.newBuilder().setVolumeId(id)
                    .setStagingTargetPath(stagingPath.toString()).setVolumeCapability(Csi2.mount()).build());
            running.client().node().nodePublishVolume(RebootAfterCheck.publishRequest(id, stagingPath, target,
                    pod.uid()));
            for (List<String> file : journal.entries("file")) {
                if (Integer.parseInt(file.get(0)) <= state.done()) {
                    Path path = target.resolve(file.get(1));
                    assertEquals(file.get(2), ok("sha256sum", path.toString()).split(" ")[0],
                            "the fsynced " + path + " reads back as written");
                }
            }
            String limit = journal.entries("limit").stream()
                    .filter(l -> Integer.parseInt(l.get(0)) <= state.inFlight().orElse(state.done()))
                    .reduce((first, second) -> second).orElseThrow().get(1);
            assertEquals(limit, CrashWorkload.ioMax(pod, id), "the limit last promised is back on re-publish");
        } finally {
            running.client().node().nodeUnpublishVolume(Csi.NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id)
                    .setTargetPath(target.toString()).build());
            running.client().node().nodeUnstageVolume(Csi.NodeUnstageVolumeRequest.newBuilder().setVolumeId(id)
                    .setStagingTargetPath(stagingPath.toString()).build());
            GuestPods.remove(pod);
        }
    }

    /** Deactivates the state's LVs and removes its snapshot, unmounting whatever a failed check left mounted. */
    private void tearDownState() throws IOException {
        List<String> mounts = Files.readAllLines(Path.of("/proc/self/mountinfo")).stream()
                .map(line -> line.split(" ")[4])
                .filter(point -> point.startsWith(GuestDriver.KUBELET + "/"))
                .sorted(Comparator.reverseOrder()).toList();
        mounts.forEach(point -> GuestCommand.run("umount", point));
        ok("lvm", "vgchange", "-q", "-an", vg);
        ok("dmsetup", "remove", STATE_DEVICE);
    }

    private boolean thinCheckPasses() {
        String tmeta = vg + "/" + GuestEnv.thinPool().orElseThrow() + "_tmeta";
        ok("lvm", "lvchange", "-ay", "-y", tmeta);
        try {
            return GuestCommand.run(Duration.ofMinutes(1), List.of("thin_check",
                    "/dev/mapper/" + vg + "-" + GuestEnv.thinPool().orElseThrow() + "_tmeta")).succeeded();
        } finally {
            ok("lvm", "lvchange", "-an", tmeta);
        }
    }

    private static Set<String> tagSet(String tags) {
        return tags.isEmpty() ? new TreeSet<>() : new TreeSet<>(List.of(tags.split(",")));
    }

    private static Map<String, String> lvTags(List<String> words) {
        Map<String, String> lvs = new HashMap<>();
        for (String word : words.subList(1, words.size())) {
            int colon = word.indexOf(':');
            lvs.put(word.substring(0, colon), word.substring(colon + 1));
        }
        return lvs;
    }

    /**
     * Keeps lvm off the guest's disks (global_filter), with no hints file to remember one: lvm is to see
     * the logged PV while the workload runs and the state being checked afterwards, never the disks
     * under them, which carry the same PV label. Rejecting the disks rather than accepting the one
     * device by its name, which changes between the phases.
     */
    static void keepLvmOffTheDisks() throws IOException {
        Path conf = Path.of(System.getenv("LVM_SYSTEM_DIR"), "lvm.conf");
        String text = Files.readAllLines(conf).stream()
                .filter(line -> !line.contains("global_filter") && !line.contains("hints ="))
                .collect(Collectors.joining("\n", "", "\n"));
        Files.writeString(conf, text.replace("devices {",
                "devices {\n    global_filter = [ \"r|^/dev/ubd|\", \"r|^/dev/block/|\", \"a|.*|\" ]\n    hints = \"none\""));
    }
}
