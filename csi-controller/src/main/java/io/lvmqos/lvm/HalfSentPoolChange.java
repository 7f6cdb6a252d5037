package io.lvmqos.lvm;

import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A thin pool change that an lvm killed halfway left in the kernel, and whether it can be finished.
 *
 * <p>lvm changes a thin pool in three steps: it commits LVM's metadata with the kernel messages of
 * the change queued in it and the pool's transaction id raised by one; it sends the messages
 * ({@code create_snap 2 1}) and then {@code set_transaction_id 1 2}; it commits again without the
 * queue. Killed between the last message and {@code set_transaction_id} (an OOM kill or a killed
 * container takes lvm with the driver), it leaves a kernel that has done the change while its
 * transaction id says it has not. Every later lvm command on the pool then sends the queue again,
 * and the kernel refuses the first create with EEXIST: "already contain thin device with
 * device_id 2 ... Manual intervention may be required". Nothing of the pool can be made, changed
 * or removed until someone intervenes.
 *
 * <p>The change is finished by sending the missing {@code set_transaction_id}, and only when the
 * kernel's metadata proves that every queued message was done: its transaction id is exactly one
 * behind LVM's, and it holds exactly the thin devices LVM records for the pool, no more (a create
 * done) and no fewer (a delete done). Then lvm finds the pool at its own transaction and drops the
 * queue, and a snapshot keeps the data its origin had when the killed lvm took it (the origin was
 * suspended from before the message until the kill). Deleting the new device instead, as lvm's
 * message suggests, would have the next lvm take the snapshot again, with whatever the origin was
 * written since, under the creation time LVM recorded the first time.
 */
final class HalfSentPoolChange {

    private static final Pattern REFUSED_CREATE = Pattern.compile(
            "Thin pool (\\S+) \\(\\d+:\\d+\\) already contain thin device with device_id \\d+\\.");

    /**
     * LVM's record of a thin pool: its transaction id and its thin LVs' device ids, by LV name; and
     * whether it is active, that is, whether the kernel holds it at all.
     */
    record Recorded(String pool, boolean active, long transactionId, Map<String, Long> thinIds) {

        Recorded {
            thinIds = Map.copyOf(thinIds);
        }

        Set<Long> ids() {
            return Set.copyOf(thinIds.values());
        }
    }

    private HalfSentPoolChange() {
    }

    /** The pool's kernel device ({@code vg-pool-tpool}) in lvm's line about a refused create. */
    static Optional<String> kernelPoolOf(String line) {
        Matcher matcher = REFUSED_CREATE.matcher(line);
        return matcher.matches() ? Optional.of(matcher.group(1)) : Optional.empty();
    }

    /** The first half of {@link #whyNotFinishable}, which needs no read of the kernel's devices. */
    static Optional<String> whyNotOneChangeBehind(Recorded recorded, long kernelTransaction) {
        return kernelTransaction == recorded.transactionId() - 1 ? Optional.empty()
                : Optional.of("the kernel's transaction id is " + kernelTransaction + " and LVM's "
                        + recorded.transactionId() + ": not one change apart");
    }

    /**
     * Why moving the kernel's transaction id to LVM's would not finish the change exactly; empty
     * when it would.
     */
    static Optional<String> whyNotFinishable(Recorded recorded, long kernelTransaction, Set<Long> kernelIds) {
        Optional<String> apart = whyNotOneChangeBehind(recorded, kernelTransaction);
        if (apart.isPresent()) {
            return apart;
        }
        Set<Long> unrecorded = new TreeSet<>(kernelIds);
        unrecorded.removeAll(recorded.ids());
        Set<Long> missing = new TreeSet<>(recorded.ids());
        missing.removeAll(kernelIds);
        if (!unrecorded.isEmpty() || !missing.isEmpty()) {
            return Optional.of("the kernel holds thin devices " + unrecorded + " that LVM does not record and lacks "
                    + missing + " that it does: not every queued message was done");
        }
        return Optional.empty();
    }
}
