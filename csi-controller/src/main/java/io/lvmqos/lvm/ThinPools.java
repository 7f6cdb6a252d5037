package io.lvmqos.lvm;

import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.Command;
import io.lvmqos.exec.CommandResult;
import io.lvmqos.exec.CommandRunner;
import io.lvmqos.exec.Deadline;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
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
import java.util.function.BiConsumer;
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
 *
 * <p>A pool whose kernel target is not loaded (a power cut left the change half sent, and lvm's
 * next change of the pool, refused, unloaded it again) is finished on its metadata instead: a copy
 * with the transaction id moved, which LVM swaps in ({@link InactiveMetadata}).
 */
public final class ThinPools {

    private static final Logger log = LoggerFactory.getLogger(ThinPools.class);

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    /** Reading a large pool's mappings can take minutes; the caller's deadline shortens it. */
    private static final Duration READ_TIMEOUT = Duration.ofMinutes(30);
    /** {@code <start> <length> thin-pool <transaction id> <used>/<total metadata> ...} */
    private static final Pattern STATUS = Pattern.compile("^\\d+ \\d+ thin-pool (\\d+) .*");
    private static final Pattern DEVICE = Pattern.compile("^\\s*<device dev_id=\"(\\d+)\"");
    private static final Pattern SUPERBLOCK = Pattern.compile("^<superblock [^>]*\\btransaction=\"(\\d+)\"");
    /** Copying a pool's metadata (at most 16 GiB) block for block; the caller's deadline shortens it. */
    private static final Duration COPY_TIMEOUT = Duration.ofMinutes(30);

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
     * What lvm does for {@link ThinPools} to the metadata LV of a pool that is not active, which
     * only lvm may activate and replace; {@link Lvm} does it within the group's change turn.
     */
    interface InactiveMetadata {

        /** Runs {@code read} with the pool's metadata LV active on its own, read-only; deactivated after. */
        <T> T reading(String pool, Function<Path, T> read);

        /**
         * Makes an LV of the size of the pool's metadata LV, runs {@code write} with the metadata
         * and the new LV, both active, and has LVM swap the new LV in as the pool's metadata; the
         * replaced one is removed.
         */
        void replacing(String pool, BiConsumer<Path, Path> write);
    }

    /**
     * Finishes the change of the pool whose kernel target lvm named in {@code said}, a refused
     * create of a change replayed; the pool when it was finished and the change that failed on it
     * can run again, once LVM's queue is dropped. In the caller's change turn, {@code recorded} read
     * in it. A pool whose target lvm left unloaded is finished through {@code inactive}.
     */
    Optional<String> finishRefusedChange(String volumeGroup, String kernelPool, String said,
                                         List<HalfSentPoolChange.Recorded> recorded, InactiveMetadata inactive) {
        Optional<HalfSentPoolChange.Recorded> pool = recorded.stream()
                .filter(p -> new DeviceMapperName(volumeGroup, p.pool()).layer("tpool").equals(kernelPool))
                .findFirst();
        if (pool.isEmpty()) {
            log.warn("lvm said \"{}\", and group {} has no thin pool of that device: left as it is", said, volumeGroup);
            return Optional.empty();
        }
        String cause = "lvm said \"" + said + "\"";
        Optional<Long> kernelTransaction = transactionIdIfLoaded(volumeGroup, pool.get().pool());
        Optional<String> refusal;
        if (kernelTransaction.isPresent()) {
            refusal = finishHalfSent(volumeGroup, pool.get(), kernelTransaction.get(), cause);
        } else if (pool.get().active()) {
            refusal = Optional.of("LVM calls the pool active, and the kernel has no -tpool target of it");
        } else {
            KernelMetadata kernel = inactive.reading(pool.get().pool(), this::metadataOf);
            refusal = finishHalfSentOfInactive(volumeGroup, pool.get(), kernel, inactive, cause);
        }
        refusal.ifPresent(why -> log.warn("lvm said \"{}\" about thin pool {}/{}, which is left as it is: {}", said,
                volumeGroup, pool.get().pool(), why));
        return refusal.isEmpty() ? Optional.of(pool.get().pool()) : Optional.empty();
    }

    /**
     * Finishes the changes of the group's pools that a killed lvm or a power cut left half sent, at
     * the driver's start or when a retried create finds its LV ({@code cause}); the pools finished.
     * A pool the kernel holds is read through its metadata snapshot, one it does not hold through
     * {@code inactive}. In the caller's change turn, {@code recorded} read in it.
     */
    List<String> finishHalfSentChanges(String volumeGroup, List<HalfSentPoolChange.Recorded> recorded, String cause,
                                       InactiveMetadata inactive) {
        List<String> finished = new ArrayList<>();
        for (HalfSentPoolChange.Recorded pool : recorded) {
            Optional<String> refusal;
            Optional<Long> kernelTransaction = transactionIdIfLoaded(volumeGroup, pool.pool());
            if (kernelTransaction.isPresent()) {
                if (HalfSentPoolChange.whyNotOneChangeBehind(pool, kernelTransaction.get()).isPresent()) {
                    continue;
                }
                refusal = finishHalfSent(volumeGroup, pool, kernelTransaction.get(), cause);
            } else if (pool.active()) {
                // active with no -tpool target: a pool with no thin LV, whose target carries the
                // pool's own name; nothing of it can be queued that a thin LV's activation would need
                continue;
            } else {
                Optional<KernelMetadata> kernel = readInactive(volumeGroup, pool.pool(), inactive);
                if (kernel.isEmpty()
                        || HalfSentPoolChange.whyNotOneChangeBehind(pool, kernel.get().transactionId()).isPresent()) {
                    continue;
                }
                refusal = finishHalfSentOfInactive(volumeGroup, pool, kernel.get(), inactive, cause);
            }
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

    /**
     * The metadata of a pool the kernel does not hold; empty, and logged, when lvm will not activate
     * its metadata LV on its own (the pool, or one of its components, was activated meanwhile).
     */
    private Optional<KernelMetadata> readInactive(String volumeGroup, String pool, InactiveMetadata inactive) {
        try {
            return Optional.of(inactive.reading(pool, this::metadataOf));
        } catch (DriverException e) {
            log.warn("could not read the metadata of inactive thin pool {}/{} to see whether a change was left half "
                    + "sent: {}", volumeGroup, pool, e.getMessage());
            return Optional.empty();
        }
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

    /**
     * The same for a pool the kernel holds no target of. A power cut between a change's messages and
     * its transaction id leaves the pool's metadata so; lvm's next change of the pool loads it,
     * replays the done create, is refused and unloads it again, so no message can reach it. Its
     * metadata is read with the pool inactive, and when it proves the change done (the same test as
     * for a loaded pool) a block-for-block copy of it gets LVM's transaction id in its superblock,
     * passes thin_check and holds the same devices, and only then does LVM swap it in. The pool's
     * own metadata is never written: a kill at any step leaves it as it was, or swapped whole, and
     * at most the copy's LV, which the next attempt removes.
     */
    private Optional<String> finishHalfSentOfInactive(String volumeGroup, HalfSentPoolChange.Recorded recorded,
                                                      KernelMetadata kernel, InactiveMetadata inactive, String cause) {
        String pool = recorded.pool();
        Optional<String> refusal = HalfSentPoolChange.whyNotFinishable(recorded, kernel.transactionId(),
                kernel.deviceIds());
        if (refusal.isPresent()) {
            return refusal;
        }
        inactive.replacing(pool, (metadata, copy) -> copyWithTransaction(metadata, copy, kernel,
                recorded.transactionId()));
        log.warn("finished a change of thin pool {}/{} that a power cut or kill left half sent ({}), with the pool "
                + "inactive: its metadata held every device LVM records, and a copy of it with the transaction id moved "
                + "from {} to {} was checked and swapped in", volumeGroup, pool, cause, kernel.transactionId(),
                recorded.transactionId());
        return Optional.empty();
    }

    /** A thin pool's metadata as thin_dump reads it off a device: its transaction id and thin devices. */
    record KernelMetadata(long transactionId, Set<Long> deviceIds) {

        KernelMetadata {
            deviceIds = Set.copyOf(deviceIds);
        }
    }

    /** What the pool metadata on {@code device}, which no kernel target uses, holds. */
    private KernelMetadata metadataOf(Path device) {
        return metadataOfDump(ran(Command.of(programs.apply("thin_dump"), TIMEOUT, "--skip-mappings",
                device.toString())).stdout());
    }

    /**
     * Copies the pool metadata on {@code metadata} to {@code copy} and moves the copy's transaction id
     * from the one {@code kernel} read to {@code transactionId}; throws, leaving the copy to be
     * removed, unless the copy then passes thin_check and holds the same devices.
     */
    private void copyWithTransaction(Path metadata, Path copy, KernelMetadata kernel, long transactionId) {
        ran(Command.of(programs.apply("dd"), COPY_TIMEOUT, "if=" + metadata, "of=" + copy, "bs=1M",
                "iflag=direct", "oflag=direct", "conv=fsync", "status=none"));
        try (FileChannel device = FileChannel.open(copy, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer block = ByteBuffer.allocate(ThinPoolSuperblock.SIZE);
            while (block.hasRemaining()) {
                if (device.read(block, block.position()) < 0) {
                    throw DriverException.internal("the copy of the pool's metadata on " + copy
                            + " is shorter than a superblock");
                }
            }
            ThinPoolSuperblock superblock = ThinPoolSuperblock.of(block.array());
            if (superblock.transactionId() != kernel.transactionId()) {
                throw DriverException.internal("the copy of the pool's metadata on " + copy + " holds transaction "
                        + superblock.transactionId() + ", and thin_dump read " + kernel.transactionId());
            }
            ByteBuffer changed = ByteBuffer.wrap(superblock.withTransactionId(transactionId));
            while (changed.hasRemaining()) {
                device.write(changed, changed.position());
            }
            device.force(true);
        } catch (IOException e) {
            throw DriverException.internal("cannot rewrite the superblock of the pool metadata copy on " + copy, e);
        }
        ran(Command.of(programs.apply("thin_check"), COPY_TIMEOUT, copy.toString()));
        KernelMetadata copied = metadataOf(copy);
        if (!copied.equals(new KernelMetadata(transactionId, kernel.deviceIds()))) {
            throw DriverException.internal("the copy of the pool's metadata on " + copy + " holds " + copied
                    + " after its transaction id was moved to " + transactionId + ", not the devices " + kernel.deviceIds());
        }
    }

    /** The transaction id the pool's kernel metadata holds; empty when the kernel has no target of the pool. */
    private Optional<Long> transactionIdIfLoaded(String volumeGroup, String pool) {
        CommandResult result = runner.run(dmsetup("status", kernelTarget(volumeGroup, pool)));
        if (!result.succeeded() && result.diagnostic().contains("Device does not exist")) {
            return Optional.empty();
        }
        return Optional.of(transactionOfStatus(succeeded(result).stdout().strip()));
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

    static KernelMetadata metadataOfDump(String xml) {
        String first = xml.lines().findFirst().orElse("");
        Matcher superblock = SUPERBLOCK.matcher(first);
        if (!superblock.find()) {
            throw DriverException.internal("thin_dump printed no superblock first: \"" + first + "\"");
        }
        return new KernelMetadata(Long.parseLong(superblock.group(1)), deviceIdsOfDump(xml));
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
