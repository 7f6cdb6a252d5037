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
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A thin snapshot whose lvm is killed between the pool's two kernel messages: after
 * {@code create_snap}, before {@code set_transaction_id}. The kernel then holds the snapshot while
 * its transaction id says it does not, and every later lvm command on the pool fails with "already
 * contain thin device with device_id N ... Manual intervention may be required" (FaultIT's
 * KillDuringRpcCheck landed there once, and every check after it in that guest failed on the pool).
 * The driver must finish the change itself, and the snapshot must hold the origin's data from
 * before the kill, not what was written after it.
 *
 * <p>The kill is made exact, not raced: the driver runs with a preloaded library that SIGKILLs the
 * process about to send a device-mapper message starting with the text of an arming file, once
 * (the file is removed as it fires). lvm, in the driver's shell or forked, is the only sender.
 */
public class HalfSentPoolChangeCheck {

    private static final Path WORK = Path.of("/tmp/lvmqos-half-sent");
    private static final Path LIBRARY = WORK.resolve("kill-at-dm-message.so");
    private static final Path ARMED = WORK.resolve("armed");
    private static final long DATA_BYTES = 4 * MIB;

    @RegisterExtension
    static final DriverForTheClass driver = new DriverForTheClass()
            .behind(List.of("env", "LD_PRELOAD=" + LIBRARY, "LVMQOS_KILL_AT_DM_MESSAGE=" + ARMED)).startedBySetUp();

    /**
     * Interposes ioctl: a DM_TARGET_MSG whose message starts with the arming file's text removes
     * the file and kills the caller before the message reaches the kernel.
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
        String vg = GuestEnv.volumeGroup();
        String pool = GuestEnv.thinPool().orElseThrow();
        Csi.Volume origin = thinVolume("half-sent-origin");
        String originDevice = dmDevice(vg, Csi2.lvName(origin.getVolumeId()));
        writeRandom(originDevice);
        String before = sha256(originDevice);

        Csi.CreateSnapshotRequest snapshotRequest = snapshotKilledBetweenMessages("half-sent-snap", origin);

        // what a killed container's restart does; its start resumes the origin the killed lvm left suspended
        driver.restart();
        awaitActive(originDevice);
        // written after the kill: the snapshot must not hold it
        writeRandom(originDevice);
        assertNotEquals(before, sha256(originDevice));

        Csi.Snapshot snapshot = driver.client().controller().createSnapshot(snapshotRequest).getSnapshot();
        Csi.Volume clone = driver.client().controller().createVolume(create("half-sent-clone", 32 * MIB,
                Map.of("lvmType", "thin")).setVolumeContentSource(Csi.VolumeContentSource.newBuilder().setSnapshot(
                        Csi.VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(snapshot.getSnapshotId())))
                .build()).getVolume();
        assertTrue(driver.log().contains("finished a change of thin pool"), "the driver says what it finished");
        assertEquals(recordedTransaction(vg, pool), kernelTransaction(vg, pool), "the pool is whole again");
        assertEquals(before, sha256(dmDevice(vg, Csi2.lvName(clone.getVolumeId()))),
                "the snapshot holds the origin's data from the moment it was taken");

        Csi2.deleteAll(driver.client(), List.of(snapshot.getSnapshotId()),
                List.of(clone.getVolumeId(), origin.getVolumeId()));
        assertEquals(List.of(), ok("lvm", "lvs", "--noheadings", "-o", "lv_name", vg).lines().map(String::strip)
                .filter(name -> name.startsWith("vol_") || name.startsWith("snap_")).toList(), "no LV left");
    }

    /**
     * The same half-sent pool, and besides a thin device in the kernel that LVM records nowhere (an
     * operator's dmsetup, a restored LVM backup): setting the transaction id would no longer be
     * exactly the killed change, so the driver leaves the pool alone and says why; once the stray
     * device is gone, the next call finishes the change.
     */
    @Test
    void aHalfSentPoolWithADeviceLvmDoesNotRecordIsLeftAlone() throws Exception {
        String vg = GuestEnv.volumeGroup();
        String pool = GuestEnv.thinPool().orElseThrow();
        Csi.Volume origin = thinVolume("half-sent-other");
        Csi.CreateSnapshotRequest snapshotRequest = snapshotKilledBetweenMessages("half-sent-other-snap", origin);
        driver.restart();
        String tpool = vg.replace("-", "--") + "-" + pool.replace("-", "--") + "-tpool";
        long stray = 1000;
        ok("dmsetup", "message", tpool, "0", "create_thin " + stray);
        long kernelBefore = kernelTransaction(vg, pool);

        Csi.CreateVolumeRequest another = create("half-sent-another", 32 * MIB, Map.of("lvmType", "thin")).build();
        StatusRuntimeException refused = Csi2.expectCode(Status.Code.FAILED_PRECONDITION,
                () -> driver.client().controller().createVolume(another));
        assertTrue(refused.getStatus().getDescription().contains("already contain thin device"),
                "lvm's own words reach the caller: " + refused.getStatus());
        assertEquals(kernelBefore, kernelTransaction(vg, pool), "the pool's transaction id was not moved");
        assertTrue(driver.log().contains("which is left as it is: the kernel holds thin devices [" + stray + "]"),
                "the driver says why it left the pool alone");

        ok("dmsetup", "message", tpool, "0", "delete " + stray);
        Csi.Volume made = driver.client().controller().createVolume(another).getVolume();
        assertEquals(recordedTransaction(vg, pool), kernelTransaction(vg, pool), "the pool is whole again");
        Csi.Snapshot snapshot = driver.client().controller().createSnapshot(snapshotRequest).getSnapshot();
        Csi2.deleteAll(driver.client(), List.of(snapshot.getSnapshotId()),
                List.of(made.getVolumeId(), origin.getVolumeId()));
    }

    private static Csi.Volume thinVolume(String name) {
        return driver.client().controller().createVolume(create(name, 32 * MIB, Map.of("lvmType", "thin")).build())
                .getVolume();
    }

    /** A CreateSnapshot whose lvm the armed library kills at set_transaction_id; the request, for its retry. */
    private static Csi.CreateSnapshotRequest snapshotKilledBetweenMessages(String name, Csi.Volume origin)
            throws Exception {
        String vg = GuestEnv.volumeGroup();
        String pool = GuestEnv.thinPool().orElseThrow();
        Csi.CreateSnapshotRequest request = Csi.CreateSnapshotRequest.newBuilder().setName(name)
                .setSourceVolumeId(origin.getVolumeId()).build();
        Files.writeString(ARMED, "set_transaction_id");
        StatusRuntimeException killed = assertThrows(StatusRuntimeException.class,
                () -> driver.client().controller().createSnapshot(request));
        assertFalse(Files.exists(ARMED), "the library killed the lvm at set_transaction_id (the call failed with "
                + killed.getStatus() + ")");
        assertEquals(recordedTransaction(vg, pool) - 1, kernelTransaction(vg, pool),
                "the pool is half sent: the kernel's transaction one behind LVM's");
        return request;
    }

    private static String dmDevice(String vg, String lv) {
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

    private static long kernelTransaction(String vg, String pool) {
        String status = ok("dmsetup", "status", vg.replace("-", "--") + "-" + pool.replace("-", "--") + "-tpool");
        return Long.parseLong(status.strip().split(" ")[3]);
    }

    private static long recordedTransaction(String vg, String pool) {
        return Long.parseLong(ok("lvm", "lvs", "--noheadings", "-o", "transaction_id", vg + "/" + pool).strip());
    }

    private static void awaitActive(String device) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!ok("dmsetup", "info", "-c", "--noheadings", "-o", "suspended", device).strip().equals("Active")) {
            assertTrue(System.nanoTime() < deadline, device + " was not resumed within 60 s of the driver's start");
            Thread.sleep(200);
        }
    }
}
