package io.lvmqos.e2e.uml;

import java.nio.file.Path;
import java.util.Optional;

/**
 * A guest run (of either kind: UML or qemu) that did not produce a result the test may trust. {@link #failure()} says which part
 * failed; the message carries the details and the tail of the guest's console.
 */
public final class UmlGuestException extends RuntimeException {
    /** Which part of a guest run failed. */
    public enum Failure {
        /** The host cannot run a guest: not root, or a package is missing. */
        PREREQUISITES("host prerequisites missing"),
        /** The kernel never ran the init script. */
        BOOT("guest did not boot"),
        /** A mount, the parameters, the LVM configuration, a disk or the network. */
        SETUP("guest setup failed"),
        MODULES("kernel module load failed"),
        VOLUME_GROUP("volume group creation failed"),
        CGROUP("cgroup setup failed"),
        PAYLOAD_TIMEOUT("payload timed out"),
        /** The guest ended while the payload ran, without its exit code (a kernel panic, for one). */
        GUEST_CRASHED("guest ended without the payload's exit code"),
        /** The payload ran and exited non-zero; see {@link GuestRun#requireSuccess()}. */
        PAYLOAD_FAILED("payload failed");

        private final String description;

        Failure(String description) {
            this.description = description;
        }

        public String description() {
            return description;
        }
    }

    private final Failure failure;
    private final transient Optional<Path> runDir;

    public UmlGuestException(Failure failure, String detail, Optional<Path> runDir, String consoleTail) {
        super(failure.description() + ": " + detail
                + runDir.map(dir -> "\nrun directory: " + dir).orElse("")
                + (consoleTail.isEmpty() ? "" : "\n--- guest console (last lines) ---\n" + consoleTail));
        this.failure = failure;
        this.runDir = runDir;
    }

    public Failure failure() {
        return failure;
    }

    /** The run's directory (console.log, out/, disk images), absent when the run never started. */
    public Optional<Path> runDir() {
        return runDir;
    }
}
