package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.guest.Csi2.create;
import static io.lvmqos.e2e.guest.Csi2.expectCode;
import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.grpc.Status;
import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Deleting a linear volume whose zeroing takes longer than one call: each DeleteVolume zeroes what
 * its deadline allows at the node's --wipe-bps, keeps its progress in an LV tag and answers ABORTED;
 * a plugin killed in between goes on from the tag; the volume is never handed out half-zeroed; the
 * last call removes it.
 */
public class ResumableWipeCheck {

    // about 20 s of zeroing at 16 MiB/s: three calls of 15 s, each keeping 5 s back for its answer
    private static final long SIZE = 320 * MIB;
    @RegisterExtension
    static final DriverForTheClass driver = new DriverForTheClass("--wipe-bps", "16Mi");

    @Test
    void aWipeLongerThanOneCallGoesOnAcrossCallsAndARestart() throws Exception {
        Csi.CreateVolumeRequest request = create("wipe-resume", SIZE, Map.of()).build();
        Csi.Volume volume = driver.client().controller().createVolume(request).getVolume();
        String lv = Csi2.lvName(volume.getVolumeId());
        String device = "/dev/" + GuestEnv.volumeGroup() + "/" + lv;
        // a tenant's data: every byte 0xff
        ok("sh", "-c", "tr '\\000' '\\377' < /dev/zero | dd of=" + device + " bs=1M count=" + SIZE / MIB
                + " iflag=fullblock oflag=direct status=none");

        long first = deleteWithin(volume, 15);
        assertTrue(first > 0 && first < SIZE, "part-way after the first call: " + first);
        assertZeroUpTo(device, first);
        assertTrue(ok("sh", "-c", "dd if=" + device + " bs=1M skip=" + (SIZE / MIB - 1) + " count=1 status=none | od -An -tx1 | head -n 1")
                .contains("ff"), "the end is not zeroed yet");

        String adopted = expectCode(Status.Code.ABORTED, () -> driver.client().controller().createVolume(request))
                .getStatus().getDescription();
        assertTrue(adopted.contains("being deleted"), "never handed out half-zeroed: " + adopted);

        driver.kill();
        driver.restart();
        long second = deleteWithin(volume, 15);
        assertTrue(second > first, "went on from " + first + " after the restart, reached " + second);
        assertZeroUpTo(device, second);

        driver.client().controller().deleteVolume(Csi.DeleteVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).build());
        System.out.printf("wipe of %d MiB at 16 MiB/s: %d MiB after the first call, %d MiB after a SIGKILL, a restart"
                + " and the second call, then removed by the third%n", SIZE / MIB, first / MIB, second / MIB);
        assertTrue(!ok("lvm", "lvs", "--noheadings", "-o", "lv_name", GuestEnv.volumeGroup()).contains(lv),
                "the LV is removed once zeroed");
    }

    /** One DeleteVolume with this deadline: ABORTED, and the zeroed length it saved. */
    private static long deleteWithin(Csi.Volume volume, int seconds) {
        var failure = expectCode(Status.Code.ABORTED, () -> driver.client().controller()
                .withDeadlineAfter(seconds, TimeUnit.SECONDS)
                .deleteVolume(Csi.DeleteVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId()).build()));
        assertTrue(failure.getStatus().getDescription().contains("the next DeleteVolume goes on"),
                failure.getStatus().toString());
        String tags = ok("lvm", "lvs", "--noheadings", "-o", "lv_tags", GuestEnv.volumeGroup() + "/" + Csi2.lvName(volume.getVolumeId()));
        for (String tag : tags.strip().split(",")) {
            if (tag.startsWith("lvmqos.wiped=")) {
                return Long.parseLong(tag.substring("lvmqos.wiped=".length()));
            }
        }
        throw new AssertionError("no lvmqos.wiped tag: " + tags);
    }

    private static void assertZeroUpTo(String device, long length) {
        GuestCommand.Result same = GuestCommand.run(Duration.ofMinutes(1),
                List.of("cmp", "-n", Long.toString(length), device, "/dev/zero"));
        assertEquals(0, same.exitCode(), "the first " + length + " bytes are zero: " + same);
    }

}
