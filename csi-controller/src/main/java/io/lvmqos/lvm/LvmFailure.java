package io.lvmqos.lvm;

import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.CommandResult;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * The failures of lvm that the driver tells apart, each known by the whole line lvm prints for it
 * under {@code LC_ALL=C}. The lines are those lvm 2.03.16 (Debian 12) printed in the user-mode-Linux
 * guest; LvmFailureTest holds them as captured and the guest's LvmMessagesCheck provokes each one
 * from the real lvm, so a release that words them differently fails a test instead of turning a
 * missing volume group into an INTERNAL error. A failure that matches none of them is unexpected.
 *
 * <p>Whole lines, not substrings: "not found" alone is also how lvm reports a missing pool, origin
 * or LV, which mean different things to a caller.
 */
enum LvmFailure {

    VOLUME_GROUP_NOT_FOUND(DriverException::failedPrecondition,
            "Volume group \"[^\"]+\" not found"),
    LOGICAL_VOLUME_NOT_FOUND(DriverException::notFound,
            "Failed to find logical volume \"[^\"]+\"",
            "Logical volume \\S+ not found in volume group \\S+\\.",
            "Snapshot origin LV \\S+ not found in Volume group \\S+\\."),
    THIN_POOL_NOT_FOUND(DriverException::failedPrecondition,
            "Pool \\S+ not found in Volume group \\S+\\.",
            "Logical volume \\S+ is not a thin pool\\."),
    NO_SPACE(DriverException::resourceExhausted,
            "Volume group \"[^\"]+\" has insufficient free space \\(\\d+ extents\\): \\d+ required\\.",
            "Insufficient free space: \\d+ extents needed, but only \\d+ available",
            "Cannot create new thin volume, free space in thin pool \\S+ reached threshold\\."),
    IN_USE(DriverException::failedPrecondition,
            "Logical volume \\S+ contains a filesystem in use\\.",
            "Logical volume \\S+ in use\\.",
            "Logical volume \\S+ is used by another device\\."),
    ALREADY_EXISTS(DriverException::alreadyExists,
            "Logical Volume \"[^\"]+\" already exists in volume group \"[^\"]+\""),
    // Activating a thin LV whose thin device the pool does not hold: LVM's metadata names it, the
    // pool's does not (a crash between their two commits; see Lvm#activateIfInPool).
    THIN_DEVICE_MISSING(DriverException::failedPrecondition,
            "device-mapper: reload ioctl on .*\\(\\d+:\\d+\\) failed: No data available"),
    // A thin pool whose kernel did a queued create that LVM still counts as unsent: an lvm killed
    // between the pool's messages (see HalfSentPoolChange, which Lvm uses to finish the change).
    POOL_CHANGE_HALF_SENT(DriverException::failedPrecondition,
            "Thin pool \\S+ \\(\\d+:\\d+\\) already contain thin device with device_id \\d+\\."),
    // A thin pool's metadata or data LV active on its own (a pool activation cut short by a kill, or an
    // operator's component activation for thin_check): lvm will not activate the pool around it.
    POOL_COMPONENT_ACTIVE(DriverException::failedPrecondition,
            "Activation of logical volume \\S+ is prohibited while logical volume \\S+ is active\\."),
    // Only when the node's lvm.conf sets global/wait_for_locks=0; a retry may find the lock free.
    LOCK_NOT_TAKEN(DriverException::unavailable,
            "Can't get lock for \\S+\\.");

    private final Function<String, DriverException> status;
    private final List<Pattern> lines;

    LvmFailure(Function<String, DriverException> status, String... lines) {
        this.status = status;
        this.lines = Arrays.stream(lines).map(Pattern::compile).toList();
    }

    /** The failure named by the first line of lvm's message that is one of the known lines. */
    static Optional<LvmFailure> of(CommandResult result) {
        String said = result.stderr().isBlank() ? result.stdout() : result.stderr();
        return said.lines().map(String::strip).flatMap(line -> Arrays.stream(values())
                .filter(failure -> failure.lines.stream().anyMatch(p -> p.matcher(line).matches()))).findFirst();
    }

    /** The first of lvm's lines that is this failure, whole. */
    Optional<String> line(CommandResult result) {
        return result.diagnostic().lines().map(String::strip)
                .filter(line -> lines.stream().anyMatch(p -> p.matcher(line).matches())).findFirst();
    }

    /** Whether lvm failed for exactly this reason. */
    boolean isWhy(CommandResult result) {
        return !result.succeeded() && of(result).filter(this::equals).isPresent();
    }

    /** lvm's failure as the gRPC-facing kind, keeping lvm's own words. */
    static DriverException classify(CommandResult result) {
        String message = result.command().arguments().getFirst() + " failed: " + result.diagnostic();
        return of(result).map(failure -> failure.status.apply(message))
                .orElseGet(() -> DriverException.internal(message + " (exit " + result.exitCode() + ")"));
    }
}
