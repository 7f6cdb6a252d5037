package io.lvmqos.e2e.guest;

import io.lvmqos.e2e.uml.GuestEnv;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The guest's volume group lock held by flock(1), the same lock file lvm takes (init.sh puts LVM's
 * locking_dir at /run/lock/lvm), so that any lvm command on the group waits until it is closed.
 */
final class HeldVolumeGroupLock implements AutoCloseable {

    private final Process holder;

    private HeldVolumeGroupLock(Process holder) {
        this.holder = holder;
    }

    /** Takes the lock of the guest's first volume group and returns once it is held. */
    static HeldVolumeGroupLock take() throws Exception {
        Path lock = Path.of("/run/lock/lvm").resolve("V_" + GuestEnv.volumeGroup());
        Files.createDirectories(lock.getParent());
        Process holder = new ProcessBuilder(List.of("flock", "--exclusive", lock.toString(), "sleep", "600"))
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        HeldVolumeGroupLock held = new HeldVolumeGroupLock(holder);
        for (int i = 0; i < 50; i++) {
            Process probe = new ProcessBuilder(List.of("flock", "--nonblock", "--shared", lock.toString(), "true"))
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (probe.waitFor() != 0) {
                return held;
            }
            TimeUnit.MILLISECONDS.sleep(100);
        }
        held.close();
        throw new AssertionError("flock did not take " + lock);
    }

    /** Releases the lock: the holder and its sleep are killed, and the kernel drops the flock with them. */
    @Override
    public void close() throws InterruptedException {
        holder.descendants().forEach(ProcessHandle::destroyForcibly);
        holder.destroyForcibly().waitFor();
    }
}
