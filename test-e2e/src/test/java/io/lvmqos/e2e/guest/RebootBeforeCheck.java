package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.guest.Csi2.create;
import static io.lvmqos.e2e.guest.Csi2.expectCode;
import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.grpc.Status;
import io.lvmqos.e2e.guest.GuestPods.CgroupDriver;
import io.lvmqos.e2e.guest.GuestPods.Pod;
import io.lvmqos.e2e.guest.GuestPods.QosClass;
import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The node before a reboot ({@code RebootIT}): two volumes with limits published into pods, files
 * written from the pods and fsynced with their checksums journalled, and a linear volume whose
 * zeroing a DeleteVolume left part-way. In the clean mode it then ends and the guest halts. In the
 * cut mode the pods go on writing, the wipe goes on, a loop of CreateVolume runs, and one lvcreate
 * of that loop is stopped at a moment of its run drawn from the host's seed; then the check asks the
 * host to SIGKILL the whole guest ({@link RebootJournal#CUT_MARKER}), and the journal's {@code cut}
 * line says which lvcreate the cut landed in.
 */
public class RebootBeforeCheck {

    // 12 s of zeroing at 16 MiB/s: a call with an 8 s deadline zeroes about 3 s of it (it keeps 5 s back),
    // and a call left running does not reach its first save (every 10 s) before the power cut
    static final long WIPE_SIZE = 192 * MIB;
    static final String WIPE_BPS = "16Mi";
    /** The moment inside an lvcreate's run at which it is stopped for the cut, drawn from the seed below this. */
    static final int MAX_CUT_DELAY_MILLIS = 400;
    static final int MAX_CUT_ATTEMPTS = 40;
    /**
     * lvm forked per command: the cut must land while an lvcreate runs, and a forked lvcreate is
     * seen by its command line, where a shell's command is not (the wipe's lvchange holds the same
     * lock). A power cut does the same to a shell's lvcreate; RebootAfterCheck recovers with shells.
     */
    @RegisterExtension
    static final DriverForTheClass driver = new DriverForTheClass("--wipe-bps", WIPE_BPS, "--fork-lvm");

    private final RebootJournal journal = new RebootJournal(GuestEnv.outDir().resolve(RebootJournal.FILE));
    private final boolean cut = "cut".equals(System.getenv(RebootJournal.MODE_ENV));

    @Test
    void publishWriteAndGoDown() throws Exception {
        List<Published> published = List.of(
                publish("reboot-thin", Map.of("lvmType", "thin", "writeBPS", "8Mi"), "wbps=8388608"),
                publish("reboot-linear", Map.of("writeIOPS", "400", "readBPS", "16Mi"), "rbps=16777216"));
        for (Published volume : published) {
            for (int i = 0; i < 3; i++) {
                writeFile(volume, "before-" + i);
            }
        }
        Csi.Volume wiped = driver.client().controller()
                .createVolume(create("reboot-wipe", WIPE_SIZE, Map.of()).build()).getVolume();
        // a DeleteVolume that its deadline stops part-way
        expectCode(Status.Code.ABORTED, () -> driver.client().controller().withDeadlineAfter(8, TimeUnit.SECONDS)
                .deleteVolume(Csi.DeleteVolumeRequest.newBuilder().setVolumeId(wiped.getVolumeId()).build()));
        long zeroed = wipedBytes(wiped.getVolumeId());
        assertTrue(zeroed > 0 && zeroed < WIPE_SIZE, "zeroed part-way: " + zeroed);
        journal.append("wipe", wiped.getVolumeId(), Long.toString(zeroed));
        if (cut) {
            cutPowerWhileEverythingRuns(published, wiped);
        }
        // else init halts the guest: the clean reboot
    }

    private void cutPowerWhileEverythingRuns(List<Published> published, Csi.Volume wiped) throws Exception {
        // the next DeleteVolume goes on zeroing from the saved point when the power is cut
        Thread.ofPlatform().daemon().start(() -> driver.client().controller().withDeadlineAfter(10, TimeUnit.MINUTES)
                .deleteVolume(Csi.DeleteVolumeRequest.newBuilder().setVolumeId(wiped.getVolumeId()).build()));
        for (Published volume : published) {
            Thread.ofPlatform().daemon().start(() -> {
                for (int i = 0; ; i++) {
                    writeFile(volume, "during-" + i);
                }
            });
        }
        Thread.ofPlatform().daemon().start(() -> {
            for (int i = 0; ; i++) {
                String name = "reboot-inflight-" + i;
                journal.append("create-start", name);
                Csi.Volume made = driver.client().controller().createVolume(
                        create(name, 64 * MIB, Map.of("lvmType", "thin", "writeBPS", "4Mi")).build()).getVolume();
                journal.append("create-done", name, made.getVolumeId());
            }
        });
        long seed = Long.parseLong(Optional.ofNullable(System.getenv(RebootJournal.SEED_ENV))
                .orElseThrow(() -> new AssertionError(RebootJournal.SEED_ENV + " is unset: RebootIT chooses the seed")));
        Random random = new Random(seed);
        // The cut must land inside an lvcreate: the chosen one is stopped (SIGSTOP) at a seeded moment
        // of its run, so that it is certainly still inside its change when the host cuts the power.
        // An lvcreate that ended before its moment came is a miss; the next one gets the next moment.
        for (int attempt = 1; ; attempt++) {
            assertTrue(attempt <= MAX_CUT_ATTEMPTS, "no lvcreate stopped inside its run in " + MAX_CUT_ATTEMPTS
                    + " attempts (seed " + seed + ")");
            int delayMillis = random.nextInt(MAX_CUT_DELAY_MILLIS);
            long seen = awaitLvcreate();
            Thread.sleep(delayMillis);
            if (stopInsideItsRun(seen)) {
                journal.append("cut", "seed=" + seed, "attempt=" + attempt, "delay-after-lvcreate-seen=" + delayMillis
                        + "ms", RebootJournal.LANDED + seen);
                break;
            }
            journal.append("cut-missed", "seed=" + seed, "attempt=" + attempt, "delay=" + delayMillis + "ms");
        }
        Files.writeString(GuestEnv.outDir().resolve(RebootJournal.CUT_MARKER), "now\n");
        Thread.sleep(Duration.ofMinutes(2)); // the host kills the guest before this ends
        throw new AssertionError("the host did not cut the guest's power within 2 minutes");
    }

    private record Published(String volumeId, Pod pod, Path target) {
    }

    private Published publish(String name, Map<String, String> parameters, String limit) throws Exception {
        Csi.Volume volume = driver.client().controller().createVolume(create(name, 256 * MIB, parameters).build())
                .getVolume();
        Csi.VolumeCapability capability = Csi2.mount();
        Path staging = GuestDriver.KUBELET.resolve("plugins/kubernetes.io/csi/lvmqos.csi.io").resolve(name)
                .resolve("globalmount");
        driver.client().node().nodeStageVolume(Csi.NodeStageVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).setStagingTargetPath(staging.toString())
                .setVolumeCapability(capability).build());
        Pod pod = GuestPods.create(UUID.randomUUID().toString(), QosClass.BURSTABLE, CgroupDriver.SYSTEMD, "");
        Path target = pod.volumePath("pv-" + name);
        driver.client().node().nodePublishVolume(RebootAfterCheck.publishRequest(volume.getVolumeId(), staging, target,
                pod.uid()));
        journal.append("volume", volume.getVolumeId(), pod.uid(), staging.toString(), target.toString(), limit);
        return new Published(volume.getVolumeId(), pod, target);
    }

    /** One file of random data written by a container of the pod and fsynced, then its checksum journalled. */
    private void writeFile(Published volume, String name) {
        Path file = volume.target().resolve(name);
        try {
            GuestCommand.run(Duration.ofMinutes(1), volume.pod().inNewContainer(List.of("dd", "if=/dev/urandom",
                    "of=" + file, "bs=64k", "count=8", "conv=fsync", "status=none"))).requireSuccess();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        journal.append("file", volume.volumeId(), name, ok("sha256sum", file.toString()).split(" ")[0]);
    }

    static long wipedBytes(String volumeId) {
        String tags = ok("lvm", "lvs", "--noheadings", "-o", "lv_tags",
                GuestEnv.volumeGroup() + "/" + Csi2.lvName(volumeId));
        for (String tag : tags.strip().split(",")) {
            if (tag.startsWith("lvmqos.wiped=")) {
                return Long.parseLong(tag.substring("lvmqos.wiped=".length()));
            }
        }
        return 0;
    }

    /** The pid of a running lvcreate, waited for up to a minute. */
    private static long awaitLvcreate() throws InterruptedException {
        long waitedFrom = System.nanoTime();
        while (true) {
            OptionalLong pid = runningLvcreate();
            if (pid.isPresent()) {
                return pid.getAsLong();
            }
            assertTrue(System.nanoTime() - waitedFrom < TimeUnit.SECONDS.toNanos(60), "no lvcreate within 60 s");
            Thread.sleep(5);
        }
    }

    /**
     * SIGSTOPs the lvcreate if it still runs and says whether it is now stopped: its pid still names
     * an lvcreate and the kernel reports it in state T. A process that had ended cannot be stopped.
     */
    private static boolean stopInsideItsRun(long pid) {
        if (GuestCommand.run("kill", "-STOP", Long.toString(pid)).exitCode() != 0) {
            return false;
        }
        Path proc = Path.of("/proc", Long.toString(pid));
        try {
            for (int i = 0; i < 100; i++) {
                if (!isLvcreate(proc)) {
                    return false;
                }
                String stat = Files.readString(proc.resolve("stat"));
                // the state follows the command name, which is in parentheses
                char state = stat.charAt(stat.lastIndexOf(')') + 2);
                if (state == 'T') {
                    return true;
                }
                Thread.sleep(1);
            }
            return false;
        } catch (java.io.IOException | java.io.UncheckedIOException gone) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static OptionalLong runningLvcreate() {
        try (var processes = Files.list(Path.of("/proc"))) {
            return processes.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit))
                    .filter(RebootBeforeCheck::isLvcreate)
                    .mapToLong(p -> Long.parseLong(p.getFileName().toString()))
                    .findFirst();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static boolean isLvcreate(Path proc) {
        try {
            String cmdline = Files.readString(proc.resolve("cmdline"));
            return cmdline.startsWith("lvcreate\0") || cmdline.contains("/lvcreate\0")
                    || cmdline.contains("\0lvcreate\0");
        } catch (java.io.IOException | java.io.UncheckedIOException gone) {
            return false;
        }
    }
}
