package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.guest.Csi2.create;
import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lvmqos.e2e.uml.GuestEnv;
import io.lvmqos.lvm.Lvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A thin snapshot whose lvm is killed at one of the pool's kernel messages. lvm first commits LVM's
 * metadata with the snapshot and its create queued, then sends {@code create_snap}, then
 * {@code set_transaction_id}.
 * <ul>
 * <li>Killed between the two messages, it leaves the kernel holding the snapshot while its
 * transaction id says it does not; every later lvm command on the pool then fails with "already
 * contain thin device with device_id N ... Manual intervention may be required" (FaultIT's
 * KillDuringRpcCheck landed there once, and every check after it in that guest failed on the
 * pool). The driver must finish the change itself, and the snapshot must hold the origin's data
 * from before the kill, not what was written after it.
 * <li>Killed before {@code create_snap}, it leaves a snapshot that LVM lists and the kernel does
 * not hold; the next lvm change of the pool sends the create, with the origin's data of that later
 * moment. A retried CreateSnapshot must not answer with it: its answer must hold the data of its
 * own moment, not of some later change of the pool.
 * </ul>
 *
 * <p>The kill is made exact, not raced: the driver runs with a preloaded library that, once (it
 * removes the arming file as it fires), SIGKILLs the process about to send a device-mapper message
 * starting with the file's text, and that process's parent first. lvm, in the driver's shell or
 * forked, is the only sender, and its parent is the driver's JVM: both die at that point, as when
 * the OOM killer or a container's kill takes the plugin, so no cleanup of the driver's runs after.
 */
public class KilledPoolChangeCheck {

    private static final Path WORK = Path.of("/tmp/lvmqos-killed-pool-change");
    private static final Path LIBRARY = WORK.resolve("kill-at-dm-message.so");
    private static final Path ARMED = WORK.resolve("armed");
    private static final long DATA_BYTES = 4 * MIB;

    @RegisterExtension
    static final DriverForTheClass driver = new DriverForTheClass()
            .behind(List.of("env", "LD_PRELOAD=" + LIBRARY, "LVMQOS_KILL_AT_DM_MESSAGE=" + ARMED)).startedBySetUp();

    /**
     * Interposes ioctl: a DM_TARGET_MSG whose message starts with the arming file's text removes
     * the file and kills the caller's parent and then the caller, before the message reaches the kernel.
     */
    private static final String LIBRARY_SOURCE = """
            #define _GNU_SOURCE
            #include <dlfcn.h>
            #include <fcntl.h>
            #include <linux/dm-ioctl.h>
            #include <signal.h>
            #include <stdarg.h>
            #include <stdlib.h>
            #include <string.h>
            #include <sys/ioctl.h>
            #include <unistd.h>

            int ioctl(int fd, unsigned long request, ...) {
                static int (*next)(int, unsigned long, void *);
                va_list rest;
                va_start(rest, request);
                void *argument = va_arg(rest, void *);
                va_end(rest);
                if (next == NULL) {
                    next = (int (*)(int, unsigned long, void *)) dlsym(RTLD_NEXT, "ioctl");
                }
                const char *armed = getenv("LVMQOS_KILL_AT_DM_MESSAGE");
                if (request == DM_TARGET_MSG && argument != NULL && armed != NULL) {
                    struct dm_ioctl *header = argument;
                    struct dm_target_msg *message = (struct dm_target_msg *) ((char *) header + header->data_start);
                    char prefix[128] = {0};
                    int file = open(armed, O_RDONLY);
                    if (file >= 0) {
                        ssize_t length = read(file, prefix, sizeof prefix - 1);
                        close(file);
                        while (length > 0 && prefix[length - 1] == '\\n') {
                            prefix[--length] = 0;
                        }
                        if (length > 0 && strncmp(message->message, prefix, length) == 0 && unlink(armed) == 0) {
                            kill(getppid(), SIGKILL);
                            kill(getpid(), SIGKILL);
                        }
                    }
                }
                return next(fd, request, argument);
            }
            """;

    @BeforeAll
    static void buildTheLibraryAndStart() throws Exception {
        GuestEnv.assumeInGuest();
        Files.createDirectories(WORK);
        Path source = WORK.resolve("kill-at-dm-message.c");
        Files.writeString(source, LIBRARY_SOURCE);
        ok("gcc", "-shared", "-fPIC", "-O2", "-o", LIBRARY.toString(), source.toString(), "-ldl");
        Files.deleteIfExists(ARMED);
        driver.start();
    }

    @Test
    void aSnapshotKilledBetweenThePoolsMessagesIsFinishedWithTheDataOfItsMoment() throws Exception {
        Csi.Volume origin = thinVolume("half-sent-origin");
        String originDevice = written(origin);
        String before = sha256(originDevice);

        Csi.CreateSnapshotRequest snapshotRequest = snapshotKilledAt("set_transaction_id", "half-sent-snap", origin);

        // its start resumes the origin the killed lvm left suspended, and finishes the pool's change
        driver.restart();
        awaitActive(originDevice);
        awaitWholePool();
        assertTrue(driver.log().contains("left half sent (found at start)"), "the driver says what it finished");
        // written after the kill: the snapshot must not hold it
        writeRandom(originDevice);
        assertNotEquals(before, sha256(originDevice));

        Csi.Snapshot snapshot = driver.client().controller().createSnapshot(snapshotRequest).getSnapshot();
        Csi.Volume clone = cloneOf(snapshot, "half-sent-clone");
        assertEquals(before, sha256(deviceOf(clone)),
                "the snapshot holds the origin's data from the moment it was taken");

        Csi2.deleteAll(driver.client(), List.of(snapshot.getSnapshotId()),
                List.of(clone.getVolumeId(), origin.getVolumeId()));
        assertEquals(List.of(), ok("lvm", "lvs", "--noheadings", "-o", "lv_name", GuestEnv.volumeGroup()).lines()
                .map(String::strip).filter(name -> name.contains("half_sent")).toList(), "no LV of the test left");
    }

    /**
     * The same half-sent pool, and besides a thin device in the kernel that LVM records nowhere (an
     * operator's dmsetup, a restored LVM backup): setting the transaction id would no longer be
     * exactly the killed change, so the driver leaves the pool alone and says why; once the stray
     * device is gone, the next call finishes the change.
     */
    @Test
    void aHalfSentPoolWithADeviceLvmDoesNotRecordIsLeftAlone() throws Exception {
        Csi.Volume origin = thinVolume("half-sent-other");
        Csi.CreateSnapshotRequest snapshotRequest = snapshotKilledAt("set_transaction_id", "half-sent-other-snap", origin);
        // made while the driver is down: its start finds the pool half sent and not finishable
        String tpool = kernelPool();
        long stray = 1000;
        ok("dmsetup", "message", tpool, "0", "create_thin " + stray);
        long kernelBefore = kernelTransaction();
        driver.restart();

        Csi.CreateVolumeRequest another = create("half-sent-another", 32 * MIB, Map.of("lvmType", "thin")).build();
        StatusRuntimeException refused = Csi2.expectCode(Status.Code.FAILED_PRECONDITION,
                () -> driver.client().controller().createVolume(another));
        assertTrue(refused.getStatus().getDescription().contains("already contain thin device"),
                "lvm's own words reach the caller: " + refused.getStatus());
        assertEquals(kernelBefore, kernelTransaction(), "the pool's transaction id was not moved");
        assertTrue(driver.log().contains("which is left as it is: the kernel holds thin devices [" + stray + "]"),
                "the driver says why it left the pool alone");

        ok("dmsetup", "message", tpool, "0", "delete " + stray);
        Csi.Volume made = driver.client().controller().createVolume(another).getVolume();
        assertEquals(recordedTransaction(), kernelTransaction(), "the pool is whole again");
        assertTrue(driver.log().contains("left half sent (lvm said"), "the call's own lvm failure had it finished");
        Csi.Snapshot snapshot = driver.client().controller().createSnapshot(snapshotRequest).getSnapshot();
        Csi2.deleteAll(driver.client(), List.of(snapshot.getSnapshotId()),
                List.of(made.getVolumeId(), origin.getVolumeId()));
    }

    /**
     * The kill of the first test, and what a power cut adds to it: nothing of the pool is active when
     * the driver comes back, and its metadata holds the snapshot at the transaction before LVM's.
     * lvm's first removal in the pool (of another snapshot here, inactive like it) would commit the
     * removal, load the pool, replay the done {@code create_snap}, be refused and unload the pool
     * again, with the removed LV's device left in it: no message can reach the pool, and the
     * difference is no longer one change. CrashStatesIT's full run found this state (seed 7207, step
     * 8: a group snapshot's retry removing the member it had taken), where every retry answered
     * INTERNAL. The driver's start must finish the change on the pool's metadata before that removal.
     */
    @Test
    void aChangeHalfSentBeforeAPowerCutIsFinishedWithThePoolInactive() throws Exception {
        Csi.Volume origin = thinVolume("inactive-pool-origin");
        String before = sha256(written(origin));
        Csi.Snapshot bystander = driver.client().controller().createSnapshot(Csi.CreateSnapshotRequest.newBuilder()
                .setName("inactive-pool-bystander").setSourceVolumeId(origin.getVolumeId()).build()).getSnapshot();
        Csi.CreateSnapshotRequest snapshotRequest = snapshotKilledAt("set_transaction_id", "inactive-pool-snap", origin);
        String vg = GuestEnv.volumeGroup();
        String pool = GuestEnv.thinPool().orElseThrow();
        ok("lvm", "lvchange", "--activate", "n", "--select", "pool_lv=" + pool, vg);
        ok("lvm", "lvchange", "--activate", "n", vg + "/" + pool);
        assertEquals("", ok("dmsetup", "ls", "--target", "thin-pool").replace("No devices found", "").strip(),
                "no pool loaded, as after a power cut");
        driver.restart();

        driver.client().controller().deleteSnapshot(Csi.DeleteSnapshotRequest.newBuilder()
                .setSnapshotId(bystander.getSnapshotId()).build());
        assertTrue(driver.log().contains("(found at start), with the pool inactive"),
                "the driver's start finished the change, and says how");
        assertEquals(List.of(), ok("lvm", "lvs", "--noheadings", "-o", "lv_name", vg).lines().map(String::strip)
                .filter(name -> name.startsWith(Lvm.METADATA_COPY_PREFIX)).toList(), "no copy of the metadata left");
        Csi.Snapshot snapshot = driver.client().controller().createSnapshot(snapshotRequest).getSnapshot();
        Csi.Volume clone = cloneOf(snapshot, "inactive-pool-clone");
        assertEquals(before, sha256(deviceOf(clone)), "the snapshot holds the origin's data from before the kill");
        assertEquals(recordedTransaction(), kernelTransaction(), "the pool is whole again");
        assertEquals(recordedDeviceIds(), kernelDeviceIds(), "the kernel holds exactly LVM's devices");
        Csi2.deleteAll(driver.client(), List.of(snapshot.getSnapshotId()),
                List.of(clone.getVolumeId(), origin.getVolumeId()));
        // lvm unloads a pool it loaded for a change once its last active thin LV is gone
        ok("lvm", "lvchange", "--activate", "y", vg + "/" + pool);
        assertEquals(recordedDeviceIds(), kernelDeviceIds(), "after the clean-up, too");
    }

    @Test
    void aSnapshotWhosePoolNeverTookItIsTakenAgainByItsRetry() throws Exception {
        Csi.Volume origin = thinVolume("unsent-origin");
        String originDevice = written(origin);
        Csi.CreateSnapshotRequest snapshotRequest = snapshotKilledAt("create_snap", "unsent-snap", origin);

        driver.restart();
        awaitActive(originDevice);
        writeRandom(originDevice);
        String atTheRetry = sha256(originDevice);
        Csi.Snapshot snapshot = driver.client().controller().createSnapshot(snapshotRequest).getSnapshot();
        assertEquals(recordedTransaction(), kernelTransaction(),
                "the pool took the snapshot before the answer");
        assertTrue(driver.log().contains("removing it to take it now"), "the driver says what it took again");
        // written after the answer: the snapshot must not hold it
        writeRandom(originDevice);
        Csi.Volume clone = cloneOf(snapshot, "unsent-clone");
        assertEquals(atTheRetry, sha256(deviceOf(clone)),
                "the snapshot holds the origin's data from the moment of its answer");
        Csi2.deleteAll(driver.client(), List.of(snapshot.getSnapshotId()),
                List.of(clone.getVolumeId(), origin.getVolumeId()));
    }

    /** The same for a group snapshot whose second member's create the pool never got. */
    @Test
    void aGroupWhosePoolNeverTookAMemberIsTakenAgainByItsRetry() throws Exception {
        Csi.Volume first = thinVolume("unsent-group-a");
        Csi.Volume second = thinVolume("unsent-group-b");
        String secondDevice = written(second);
        long secondMemberId = ok("lvm", "lvs", "--noheadings", "-o", "thin_id", GuestEnv.volumeGroup()).lines()
                .map(String::strip).filter(id -> !id.isEmpty()).mapToLong(Long::parseLong).max().orElseThrow() + 2;
        Csi.CreateVolumeGroupSnapshotRequest request = Csi.CreateVolumeGroupSnapshotRequest.newBuilder()
                .setName("unsent-group").addSourceVolumeIds(first.getVolumeId())
                .addSourceVolumeIds(second.getVolumeId()).build();
        Files.writeString(ARMED, "create_snap " + secondMemberId + " ");
        assertThrows(StatusRuntimeException.class,
                () -> driver.client().groupController().createVolumeGroupSnapshot(request));
        assertFalse(Files.exists(ARMED), "the library killed the lvm at the second member's create_snap");

        driver.restart();
        awaitActive(secondDevice);
        writeRandom(secondDevice);
        String atTheRetry = sha256(secondDevice);
        Csi.VolumeGroupSnapshot group = driver.client().groupController().createVolumeGroupSnapshot(request)
                .getGroupSnapshot();
        assertTrue(driver.log().contains("taking the group again"), "the driver says what it took again");
        writeRandom(secondDevice);
        Csi.Snapshot secondMember = group.getSnapshotsList().stream()
                .filter(member -> member.getSourceVolumeId().equals(second.getVolumeId())).findFirst().orElseThrow();
        Csi.Volume clone = cloneOf(secondMember, "unsent-group-clone");
        assertEquals(atTheRetry, sha256(deviceOf(clone)),
                "the member holds its origin's data from the moment of the group's answer");
        driver.client().groupController().deleteVolumeGroupSnapshot(Csi.DeleteVolumeGroupSnapshotRequest.newBuilder()
                .setGroupSnapshotId(group.getGroupSnapshotId())
                .addAllSnapshotIds(group.getSnapshotsList().stream().map(Csi.Snapshot::getSnapshotId).toList()).build());
        Csi2.deleteAll(driver.client(), List.of(),
                List.of(clone.getVolumeId(), first.getVolumeId(), second.getVolumeId()));
    }

    /**
     * A clone (CreateVolume from a snapshot) whose lvcreate is killed between its {@code create_snap}
     * and the transaction id, while nothing is suspended (the snapshot it copies is inactive), so
     * the driver's start finds nothing to resume and does not look at the pool. The retry finds the
     * LV, inactive, and activation succeeds, since the kernel holds its device; the pool is still one
     * change behind. A later removal of another thin LV then had lvm commit the removal and replay
     * the clone's {@code create_snap}, which the kernel refused (EEXIST), leaving a kernel device
     * LVM no longer records: every change of the pool was refused from then on (ChurnIT, seed
     * -794653768383341878). The retry must leave the pool whole, and removals after it exact.
     */
    @Test
    void aCloneKilledBetweenThePoolsMessagesIsRetriedToAWholePool() throws Exception {
        Csi.Volume origin = thinVolume("killed-clone-origin");
        Csi.Volume bystander = thinVolume("killed-clone-bystander");
        Csi.Snapshot snapshot = driver.client().controller().createSnapshot(Csi.CreateSnapshotRequest.newBuilder()
                .setName("killed-clone-snap").setSourceVolumeId(origin.getVolumeId()).build()).getSnapshot();
        Files.writeString(ARMED, "set_transaction_id");
        StatusRuntimeException killed = assertThrows(StatusRuntimeException.class,
                () -> cloneOf(snapshot, "killed-clone"));
        assertFalse(Files.exists(ARMED), "the library killed the lvm at set_transaction_id (the call failed with "
                + killed.getStatus() + ")");
        assertEquals(recordedTransaction() - 1, kernelTransaction(),
                "LVM committed the clone, the kernel's transaction id did not follow");

        driver.restart();
        Csi.Volume clone = cloneOf(snapshot, "killed-clone");
        assertEquals(recordedTransaction(), kernelTransaction(), "the pool took the clone before the answer");
        assertEquals(recordedDeviceIds(), kernelDeviceIds(), "after the retry, the kernel holds exactly LVM's devices");
        Csi2.deleteAll(driver.client(), List.of(), List.of(bystander.getVolumeId()));
        assertEquals(recordedTransaction(), kernelTransaction(), "the removal after it finished");
        assertEquals(recordedDeviceIds(), kernelDeviceIds(),
                "after a later removal, the kernel holds exactly LVM's devices: none left behind");
        Csi2.deleteAll(driver.client(), List.of(snapshot.getSnapshotId()),
                List.of(clone.getVolumeId(), origin.getVolumeId()));
        assertEquals(recordedDeviceIds(), kernelDeviceIds(), "after the clean-up, too");
    }

    /** A DeleteSnapshot's lvremove killed between its {@code delete} message and the transaction id. */
    @Test
    void aDeleteKilledBetweenThePoolsMessagesIsRetriedToItsEnd() throws Exception {
        Csi.Volume origin = thinVolume("killed-delete-origin");
        Csi.Snapshot snapshot = driver.client().controller().createSnapshot(Csi.CreateSnapshotRequest.newBuilder()
                .setName("killed-delete-snap").setSourceVolumeId(origin.getVolumeId()).build()).getSnapshot();
        Csi.DeleteSnapshotRequest delete = Csi.DeleteSnapshotRequest.newBuilder()
                .setSnapshotId(snapshot.getSnapshotId()).build();
        Files.writeString(ARMED, "set_transaction_id");
        assertThrows(StatusRuntimeException.class, () -> driver.client().controller().deleteSnapshot(delete));
        assertFalse(Files.exists(ARMED), "the library killed the lvm at set_transaction_id");
        driver.restart();
        driver.client().controller().deleteSnapshot(delete);
        Csi.Volume after = thinVolume("killed-delete-after");
        assertEquals(recordedTransaction(), kernelTransaction(), "the pool is whole again");
        Csi2.deleteAll(driver.client(), List.of(), List.of(after.getVolumeId(), origin.getVolumeId()));
    }

    /** A CreateVolume's lvcreate killed between its {@code create_thin} message and the transaction id. */
    @Test
    void aCreateKilledBetweenThePoolsMessagesIsRetriedToItsEnd() throws Exception {
        Csi.CreateVolumeRequest request = create("killed-create", 32 * MIB, Map.of("lvmType", "thin")).build();
        Files.writeString(ARMED, "set_transaction_id");
        assertThrows(StatusRuntimeException.class, () -> driver.client().controller().createVolume(request));
        assertFalse(Files.exists(ARMED), "the library killed the lvm at set_transaction_id");
        driver.restart();
        Csi.Volume volume = driver.client().controller().createVolume(request).getVolume();
        Csi.Volume after = thinVolume("killed-create-after");
        assertEquals(recordedTransaction(), kernelTransaction(), "the pool is whole again");
        assertEquals(ok("sh", "-c", "head -c " + DATA_BYTES + " /dev/zero | sha256sum").split(" ")[0],
                sha256(deviceOf(volume)), "the new volume reads as zeros");
        Csi2.deleteAll(driver.client(), List.of(), List.of(after.getVolumeId(), volume.getVolumeId()));
    }

    /** The volume's device, after random data was written over its first MiBs. */
    private static String written(Csi.Volume volume) {
        String device = deviceOf(volume);
        writeRandom(device);
        return device;
    }

    private static Csi.Volume cloneOf(Csi.Snapshot snapshot, String name) {
        return driver.client().controller().createVolume(create(name, 32 * MIB, Map.of("lvmType", "thin"))
                .setVolumeContentSource(Csi.VolumeContentSource.newBuilder().setSnapshot(
                        Csi.VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(snapshot.getSnapshotId())))
                .build()).getVolume();
    }

    private static Csi.Volume thinVolume(String name) {
        return driver.client().controller().createVolume(create(name, 32 * MIB, Map.of("lvmType", "thin")).build())
                .getVolume();
    }

    /**
     * A CreateSnapshot whose lvm the armed library kills as it is about to send the pool message
     * starting with {@code message}; the request, for its retry.
     */
    private static Csi.CreateSnapshotRequest snapshotKilledAt(String message, String name, Csi.Volume origin)
            throws Exception {
        Csi.CreateSnapshotRequest request = Csi.CreateSnapshotRequest.newBuilder().setName(name)
                .setSourceVolumeId(origin.getVolumeId()).build();
        Files.writeString(ARMED, message);
        StatusRuntimeException killed = assertThrows(StatusRuntimeException.class,
                () -> driver.client().controller().createSnapshot(request));
        assertFalse(Files.exists(ARMED), "the library killed the lvm at " + message + " (the call failed with "
                + killed.getStatus() + ")");
        assertEquals(recordedTransaction() - 1, kernelTransaction(),
                "LVM committed the change, the kernel's transaction id did not follow");
        return request;
    }

    private static String deviceOf(Csi.Volume volume) {
        String vg = GuestEnv.volumeGroup();
        String lv = Csi2.lvName(volume.getVolumeId());
        return "/dev/mapper/" + vg.replace("-", "--") + "-" + lv.replace("-", "--");
    }

    private static void writeRandom(String device) {
        ok("dd", "if=/dev/urandom", "of=" + device, "bs=1M", "count=" + DATA_BYTES / MIB, "oflag=direct",
                "status=none");
    }

    private static String sha256(String device) {
        return ok("sh", "-c", "dd if=" + device + " bs=1M count=" + DATA_BYTES / MIB + " iflag=direct status=none"
                + " | sha256sum").split(" ")[0];
    }

    private static String kernelPool() {
        String vg = GuestEnv.volumeGroup();
        String pool = GuestEnv.thinPool().orElseThrow();
        return vg.replace("-", "--") + "-" + pool.replace("-", "--") + "-tpool";
    }

    private static long kernelTransaction() {
        String status = ok("dmsetup", "status", kernelPool());
        return Long.parseLong(status.strip().split(" ")[3]);
    }

    private static long recordedTransaction() {
        String vg = GuestEnv.volumeGroup();
        String pool = GuestEnv.thinPool().orElseThrow();
        return Long.parseLong(ok("lvm", "lvs", "--noheadings", "-o", "transaction_id", vg + "/" + pool).strip());
    }

    /** The thin device ids LVM's metadata records for the pool. */
    private static java.util.Set<Long> recordedDeviceIds() {
        String vg = GuestEnv.volumeGroup();
        String pool = GuestEnv.thinPool().orElseThrow();
        return ok("lvm", "lvs", "--noheadings", "-o", "pool_lv,thin_id", vg).lines().map(String::strip)
                .map(line -> line.split("\\s+")).filter(words -> words.length == 2 && words[0].equals(pool))
                .map(words -> Long.parseLong(words[1])).collect(java.util.stream.Collectors.toCollection(java.util.TreeSet::new));
    }

    /** The thin device ids the pool's kernel metadata holds, read from a metadata snapshot taken for it. */
    private static java.util.Set<Long> kernelDeviceIds() {
        String vg = GuestEnv.volumeGroup();
        String pool = GuestEnv.thinPool().orElseThrow();
        ok("dmsetup", "message", kernelPool(), "0", "reserve_metadata_snap");
        try {
            String dump = ok("thin_dump", "--metadata-snap", "--skip-mappings",
                    "/dev/mapper/" + vg.replace("-", "--") + "-" + pool.replace("-", "--") + "_tmeta");
            java.util.regex.Matcher device = java.util.regex.Pattern.compile("<device dev_id=\"(\\d+)\"").matcher(dump);
            java.util.Set<Long> ids = new java.util.TreeSet<>();
            while (device.find()) {
                ids.add(Long.parseLong(device.group(1)));
            }
            return ids;
        } finally {
            ok("dmsetup", "message", kernelPool(), "0", "release_metadata_snap");
        }
    }

    private static void awaitWholePool() throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (kernelTransaction() != recordedTransaction()) {
            assertTrue(System.nanoTime() < deadline, "the pool was not whole within 60 s of the driver's start");
            Thread.sleep(200);
        }
    }

    private static void awaitActive(String device) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!ok("dmsetup", "info", "-c", "--noheadings", "-o", "suspended", device).strip().equals("Active")) {
            assertTrue(System.nanoTime() < deadline, device + " was not resumed within 60 s of the driver's start");
            Thread.sleep(200);
        }
    }
}
