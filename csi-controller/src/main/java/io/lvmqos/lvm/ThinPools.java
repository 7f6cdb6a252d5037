package io.lvmqos.lvm;

import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.Command;
import io.lvmqos.exec.CommandResult;
import io.lvmqos.exec.CommandRunner;
import io.lvmqos.exec.Deadline;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The driver's thin pools as the kernel holds them, as opposed to what LVM's metadata records of
 * them: the one owner of everything the driver does to a pool's kernel target besides lvm.
 *
 * <p>A pool has one metadata snapshot, a frozen copy of its metadata that thin-provisioning-tools
 * read; whoever reserves it must release it, and a release by anyone else takes it from under a
 * reader. So every reserve, read and release of it happens here under the pool's lock: the
 * changed-block reads of SnapshotMetadata, the device-id dump that checks a pool change, and the
 * start-up release of a snapshot that a killed run left held, which skips a pool whose lock is taken
 * (its holder releases what it reserved). The pool's transaction id ({@code dmsetup status} of its
 * {@code -tpool} target) and the message that moves it are here too, with the two uses of both:
 * finishing a change that a killed lvm left half sent ({@link HalfSentPoolChange}) and finding the
 * thin LVs whose create LVM queued and no lvm sent. {@link Lvm} calls those within the group's
 * change turn, with LVM's record of the pools read in that turn.
 */
public final class ThinPools {

    private static final Logger log = LoggerFactory.getLogger(ThinPools.class);

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    /** Reading a large pool's mappings can take minutes; the caller's deadline shortens it. */
    private static final Duration READ_TIMEOUT = Duration.ofMinutes(30);
    /** {@code <start> <length> thin-pool <transaction id> <used>/<total metadata> ...} */
    private static final Pattern STATUS = Pattern.compile("^\\d+ \\d+ thin-pool (\\d+) .*");
    private static final Pattern DEVICE = Pattern.compile("^\\s*<device dev_id=\"(\\d+)\"");

    private final CommandRunner runner;
    private final Function<String, Path> programs;
    /** Per pool ({@code vg/pool}), held from the reserve of its metadata snapshot to its release. */
    private final ConcurrentHashMap<String, ReentrantLock> snapshotLocks = new ConcurrentHashMap<>();

    /** {@code programs} finds dmsetup and thin_dump when they are first needed. */
    public ThinPools(CommandRunner runner, Function<String, Path> programs) {
        this.runner = runner;
        this.programs = programs;
    }

    /**
     * Runs {@code read} with the pool's metadata snapshot reserved for it, given the metadata LV that
     * thin-provisioning-tools read with {@code --metadata-snap}; released on every way out. Reads of
     * one pool take turns, each waiting within the call's deadline.
     */
    public void readingMetadataSnapshot(String volumeGroup, String pool, Consumer<Path> read) {
        holdingMetadataSnapshot(volumeGroup, pool, READ_TIMEOUT, metadata -> {
            read.accept(metadata);
            return null;
        });
    }

    /**
     * Releases the metadata snapshots that a run of the driver killed during a read left held, in
     * the thin pools of {@code volumes}: with dmsetup only, no lvm command. A pool whose snapshot one
     * of this run's reads holds is left to that read.
     */
    public void releaseStaleSnapshots(Collection<LogicalVolume> volumes) {
        volumes.stream().filter(LogicalVolume::isThin).filter(lv -> lv.pool().isPresent())
                .map(lv -> new DeviceMapperName(lv.volumeGroup(), lv.pool().get())).distinct()
                .forEach(pool -> {
                    if (releaseStale(pool.volumeGroup(), pool.logicalVolume())) {
                        log.info("released the metadata snapshot of thin pool {}/{} that an earlier run left held",
                                pool.volumeGroup(), pool.logicalVolume());
                    }
                });
    }

    /** True when a snapshot was held and is released now; false when the pool's lock is taken or none was held. */
    boolean releaseStale(String volumeGroup, String pool) {
        ReentrantLock lock = snapshotLock(volumeGroup, pool);
        if (!lock.tryLock()) {
            return false;
        }
        try {
            return release(volumeGroup, pool);
        } finally {
            lock.unlock();
        }
    }

    /**
     * The thin LVs among {@code names} whose device their pool's kernel does not hold: LVM recorded
     * each with its create queued, and the lvm that queued it was killed before it sent it.
     * {@code recorded} is LVM's record of the group's pools, read in the change turn the caller holds.
     */
    Set<String> queued(String volumeGroup, List<HalfSentPoolChange.Recorded> recorded, Collection<String> names) {
        Set<String> queued = new TreeSet<>();
        for (HalfSentPoolChange.Recorded pool : recorded) {
            Map<String, Long> asked = new HashMap<>(pool.thinIds());
            asked.keySet().retainAll(Set.copyOf(names));
            // an inactive pool's messages are sent when lvm activates it, before any of its LVs can be
            if (asked.isEmpty() || !pool.active()) {
                continue;
            }
            // lvs can call a pool active whose kernel target is not there: seen after a power cut,
            // on a retried group snapshot (CrashStatesIT, 2026-12-07); no target, no queue to look at
            Optional<Long> kernelTransaction = transactionIdIfLoaded(volumeGroup, pool.pool());
            if (kernelTransaction.isEmpty() || kernelTransaction.get() == pool.transactionId()) {
                continue;
            }
            Set<Long> held = deviceIds(volumeGroup, pool.pool());
            asked.forEach((name, id) -> {
                if (!held.contains(id)) {
                    queued.add(name);
                }
            });
        }
        return queued;
    }

    /**
     * Finishes the change of the pool whose kernel target lvm named in {@code said}, a refused
     * create of a change replayed; the pool when it was finished and the change that failed on it
     * can run again, once LVM's queue is dropped. In the caller's change turn, {@code recorded} read in it.
     */
    Optional<String> finishRefusedChange(String volumeGroup, String kernelPool, String said,
                                         List<HalfSentPoolChange.Recorded> recorded) {
        Optional<HalfSentPoolChange.Recorded> pool = recorded.stream()
                .filter(p -> new DeviceMapperName(volumeGroup, p.pool()).layer("tpool").equals(kernelPool))
                .findFirst();
        if (pool.isEmpty()) {
            log.warn("lvm said \"{}\", and group {} has no thin pool of that device: left as it is", said, volumeGroup);
            return Optional.empty();
        }
        Optional<String> refusal = finishHalfSent(volumeGroup, pool.get(),
                transactionId(volumeGroup, pool.get().pool()), "lvm said \"" + said + "\"");
        refusal.ifPresent(why -> log.warn("lvm said \"{}\" about thin pool {}/{}, which is left as it is: {}", said,
                volumeGroup, pool.get().pool(), why));
        return refusal.isEmpty() ? Optional.of(pool.get().pool()) : Optional.empty();
    }

    /**
     * Finishes the changes of the group's active pools that a killed lvm left half sent, at the
     * driver's start or when a retried create finds its LV ({@code cause}); the pools finished. In the caller's change turn, {@code recorded} read in it.
     */
    List<String> finishHalfSentChanges(String volumeGroup, List<HalfSentPoolChange.Recorded> recorded, String cause) {
        List<String> finished = new ArrayList<>();
        for (HalfSentPoolChange.Recorded pool : recorded) {
            if (!pool.active()) {
                continue;
            }
            long kernelTransaction = transactionId(volumeGroup, pool.pool());
            if (HalfSentPoolChange.whyNotOneChangeBehind(pool, kernelTransaction).isPresent()) {
                continue;
            }
            Optional<String> refusal = finishHalfSent(volumeGroup, pool, kernelTransaction, cause);
            if (refusal.isEmpty()) {
                finished.add(pool.pool());
            } else {
                // a create queued and not sent yet is sent by lvm's next change of the pool; anything
                // else makes that change fail, and the driver's own change then logs it as a warning
                log.info("thin pool {}/{} is one change behind LVM's record and was left as it is: {}",
                        volumeGroup, pool.pool(), refusal.get());
            }
        }
        return finished;
    }

    /** Empty when the pool's change was finished; otherwise why it was left as it is. */
    private Optional<String> finishHalfSent(String volumeGroup, HalfSentPoolChange.Recorded recorded,
                                            long kernelTransaction, String cause) {
        String pool = recorded.pool();
        // the metadata snapshot and its dump only for a pool the transaction ids do not rule out already
        Optional<String> refusal = HalfSentPoolChange.whyNotOneChangeBehind(recorded, kernelTransaction)
                .or(() -> HalfSentPoolChange.whyNotFinishable(recorded, kernelTransaction,
                        deviceIds(volumeGroup, pool)));
        if (refusal.isPresent()) {
            return refusal;
        }
        ran(message(volumeGroup, pool, "set_transaction_id " + kernelTransaction + " " + recorded.transactionId()));
        log.warn("finished a change of thin pool {}/{} that a killed lvm left half sent ({}): the kernel held every "
                + "device LVM records, so its transaction id was moved from {} to {}", volumeGroup, pool, cause,
                kernelTransaction, recorded.transactionId());
        return Optional.empty();
    }

    /** The transaction id the pool's kernel metadata holds; empty when the kernel has no target of the pool. */
    private Optional<Long> transactionIdIfLoaded(String volumeGroup, String pool) {
        CommandResult result = runner.run(dmsetup("status", kernelTarget(volumeGroup, pool)));
        if (!result.succeeded() && result.diagnostic().contains("Device does not exist")) {
            return Optional.empty();
        }
        return Optional.of(transactionOfStatus(succeeded(result).stdout().strip()));
    }

    /** The transaction id the pool's kernel metadata holds. */
    private long transactionId(String volumeGroup, String pool) {
        CommandResult result = ran(dmsetup("status", kernelTarget(volumeGroup, pool)));
        return transactionOfStatus(result.stdout().strip());
    }

    /**
     * The thin device ids the pool's kernel metadata holds, read from its metadata snapshot. Waits
     * for a changed-block read of the pool only as long as a dmsetup may take, since the caller holds
     * the group's change turn: UNAVAILABLE when a read holds the pool longer.
     */
    private Set<Long> deviceIds(String volumeGroup, String pool) {
        return holdingMetadataSnapshot(volumeGroup, pool, TIMEOUT, metadata -> deviceIdsOfDump(ran(Command.of(
                programs.apply("thin_dump"), TIMEOUT, "--metadata-snap", "--skip-mappings", metadata.toString()))
                .stdout()));
    }

    private <T> T holdingMetadataSnapshot(String volumeGroup, String pool, Duration longestWait, Function<Path, T> read) {
        ReentrantLock lock = snapshotLock(volumeGroup, pool);
        Duration wait = runner.callDeadline().remaining().filter(left -> left.compareTo(longestWait) < 0)
                .orElse(longestWait);
        try {
            if (!lock.tryLock(Math.max(0, wait.toNanos()), TimeUnit.NANOSECONDS)) {
                throw DriverException.unavailable("another read of thin pool " + volumeGroup + "/" + pool
                        + "'s metadata snapshot is still in progress; retry");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw DriverException.aborted("waiting for thin pool " + volumeGroup + "/" + pool
                    + "'s metadata snapshot was interrupted: the driver is shutting down");
        }
        try {
            reserve(volumeGroup, pool);
            try {
                return read.apply(new DeviceMapperName(volumeGroup, pool + "_tmeta").path());
            } finally {
                if (!release(volumeGroup, pool)) {
                    log.warn("could not release the metadata snapshot of thin pool {}/{}; the next start-up "
                            + "releases it", volumeGroup, pool);
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Reserves the snapshot, under the pool's lock: one held already is no read of this run's, but
     * one a killed run left (if start-up has not released it yet), and is released first.
     */
    private void reserve(String volumeGroup, String pool) {
        CommandResult reserved = runner.run(message(volumeGroup, pool, "reserve_metadata_snap"));
        if (reserved.succeeded()) {
            return;
        }
        if (release(volumeGroup, pool)) {
            log.info("released the metadata snapshot of thin pool {}/{} that an earlier run left held", volumeGroup,
                    pool);
            reserved = runner.run(message(volumeGroup, pool, "reserve_metadata_snap"));
        }
        if (!reserved.succeeded()) {
            throw DriverException.unavailable("cannot reserve the metadata snapshot of thin pool " + volumeGroup + "/"
                    + pool + " (is the pool active?): " + reserved.diagnostic());
        }
    }

    /**
     * Drops the pool's metadata snapshot; false when there was none to drop, or the pool is not
     * active. With no deadline: a read stopped by its caller's deadline must still release.
     */
    private boolean release(String volumeGroup, String pool) {
        return runner.run(message(volumeGroup, pool, "release_metadata_snap"), Deadline.NONE).succeeded();
    }

    private ReentrantLock snapshotLock(String volumeGroup, String pool) {
        return snapshotLocks.computeIfAbsent(volumeGroup + "/" + pool, key -> new ReentrantLock(true));
    }

    /** The pool's kernel target, as lvm's messages name it. */
    private static String kernelTarget(String volumeGroup, String pool) {
        return new DeviceMapperName(volumeGroup, pool).layer("tpool");
    }

    static long transactionOfStatus(String status) {
        Matcher matcher = STATUS.matcher(status);
        if (!matcher.matches()) {
            throw DriverException.internal("not a thin pool's status: \"" + status + "\"");
        }
        return Long.parseLong(matcher.group(1));
    }

    static Set<Long> deviceIdsOfDump(String xml) {
        Set<Long> ids = new TreeSet<>();
        for (String line : xml.lines().toList()) {
            Matcher matcher = DEVICE.matcher(line);
            if (matcher.find()) {
                ids.add(Long.parseLong(matcher.group(1)));
            }
        }
        return ids;
    }

    private Command message(String volumeGroup, String pool, String message) {
        return dmsetup("message", kernelTarget(volumeGroup, pool), "0", message);
    }

    private Command dmsetup(String... arguments) {
        return Command.of(programs.apply("dmsetup"), TIMEOUT, List.of(arguments));
    }

    private CommandResult ran(Command command) {
        return succeeded(runner.run(command));
    }

    private static CommandResult succeeded(CommandResult result) {
        if (!result.succeeded()) {
            throw DriverException.internal(result.command().display() + " failed (exit " + result.exitCode() + "): "
                    + result.diagnostic());
        }
        return result;
    }
}
