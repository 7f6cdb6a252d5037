package io.lvmqos.lvm;

import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.Command;
import io.lvmqos.exec.CommandResult;
import io.lvmqos.exec.CommandRunner;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lvm2 command line, one method per verb. Reports are read as JSON in bytes; failures are
 * classified by {@link LvmFailure} from lvm's own message, so callers see a {@link DriverException}
 * with the right code, or an empty report for a group or LV that does not exist, and never read
 * stderr themselves.
 */
public final class Lvm {

    private static final Logger log = LoggerFactory.getLogger(Lvm.class);

    /** The start of the name of the thin LV made and removed to have lvm drop a finished pool's queue. */
    public static final String QUEUE_DROP_PREFIX = "lvmqos_queue_drop_";
    /**
     * The start of the name of the LV that holds a copy of a thin pool's metadata while the driver
     * finishes the pool's change with the pool inactive ({@link ThinPools}); the pool's name follows.
     */
    public static final String METADATA_COPY_PREFIX = "lvmqos_pool_meta_";

    // Reports queue behind other commands on the VG lock; the caller's RPC deadline bounds them anyway.
    private static final Duration REPORT_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration CHANGE_TIMEOUT = Duration.ofSeconds(120);
    /**
     * How long a change that must be stopped has between SIGTERM and SIGKILL. lvm defers SIGTERM
     * from before it takes the VG lock until it releases it, so a change stopped while it still
     * waits for the lock also gets to take it and finish; the {@link VolumeGroupLimiter} keeps that
     * queue short. 15 s of it, after the driver's 10 s for calls in flight, stays within the
     * DaemonSet's 30 s termination grace.
     */
    static final Duration CHANGE_STOP_GRACE = Duration.ofSeconds(15);
    /** A thin pool's metadata and data LVs. */
    private static final int POOL_COMPONENTS = 2;

    private final CommandRunner runner;
    private final Path lvm;
    private final VolumeGroupLimiter limiter;
    private final Optional<LvmShells> shells;
    private final ConcurrentHashMap<String, Changes> changes = new ConcurrentHashMap<>();
    private final ThinPools thinPools;
    /**
     * Open unless {@link #holdChangesForStartCheck} closed it, until {@link #checkingAtStart} has
     * run: a change of any thread but the start's waits for it (see there).
     */
    private volatile CompletableFuture<Void> startChecked = CompletableFuture.completedFuture(null);
    private volatile Thread startChecker;

    /**
     * How many metadata changes this driver has started and finished on a volume group: two equal
     * counts, read before and after a report, say that no change of the driver's ran beside it.
     */
    public record Changes(long started, long finished) {

        /** No change of the driver's is running. */
        public boolean quiet() {
            return started == finished;
        }
    }

    public Lvm(CommandRunner runner, Path lvmProgram, VolumeGroupLimiter limiter, Optional<LvmShells> shells) {
        this.runner = runner;
        this.lvm = lvmProgram;
        this.limiter = limiter;
        this.shells = shells;
        this.thinPools = new ThinPools(runner, CommandRunner::locate);
    }

    public Lvm(CommandRunner runner, Path lvmProgram) {
        this(runner, lvmProgram, VolumeGroupLimiter.standard(runner::callDeadline), Optional.empty());
    }

    /** lvm forked once per command. */
    public static Lvm onThisHost(CommandRunner runner) {
        return new Lvm(runner, CommandRunner.locate("lvm"));
    }

    /**
     * lvm run in long-lived shells ({@link LvmShells}) where it can be, their configuration made
     * below {@code workDir}; the caller closes the shells when the driver ends.
     */
    public static Lvm withShells(CommandRunner runner, Path workDir) {
        Path program = CommandRunner.locate("lvm");
        return new Lvm(runner, program, VolumeGroupLimiter.standard(runner::callDeadline),
                Optional.of(new LvmShells(runner, program, workDir, CHANGE_STOP_GRACE)));
    }

    /** The owner of the group's thin pools' kernel side, which this and the changed-block reads share. */
    public ThinPools thinPools() {
        return thinPools;
    }

    /** Ends the idle lvm shells, if this runs lvm in shells. */
    public void closeShells() {
        shells.ifPresent(LvmShells::close);
    }

    public Optional<VolumeGroup> volumeGroup(String name) {
        return parseVolumeGroup(run(name, volumeGroupReport(name)));
    }

    private Command volumeGroupReport(String name) {
        return command(REPORT_TIMEOUT, "vgs", "--reportformat", "json", "--units", "b", "--nosuffix", "-o",
                String.join(",", LvmReport.VG_FIELDS), "--", name);
    }

    private Optional<VolumeGroup> parseVolumeGroup(CommandResult result) {
        if (LvmFailure.VOLUME_GROUP_NOT_FOUND.isWhy(result)) {
            return Optional.empty();
        }
        if (!result.succeeded()) {
            throw LvmFailure.classify(result);
        }
        return LvmReport.volumeGroups(result.stdout()).stream().findFirst();
    }

    /**
     * The same vgs, run without waiting its turn among the group's lvm commands
     * ({@link VolumeGroupLimiter}): for the health check, whose question is whether lvm answers at
     * all, so that a burst of calls queued in the driver is not taken for a stuck lvm. It still waits
     * on the group's lock like any lvm. One such process at a time (the check runs on one thread).
     */
    public Optional<VolumeGroup> volumeGroupOutOfTurn(String name) {
        return parseVolumeGroup(runner.run(volumeGroupReport(name)));
    }

    /**
     * The volume group and its visible LVs from one lvs (a second command, vgs, only when the
     * group has no LV yet); empty when the group does not exist.
     */
    public Optional<VolumeGroupContents> contents(String volumeGroup) {
        CommandResult result = run(volumeGroup, lvsReport(LvmReport.LV_AND_VG_FIELDS, volumeGroup));
        if (LvmFailure.VOLUME_GROUP_NOT_FOUND.isWhy(result)) {
            return Optional.empty();
        }
        if (!result.succeeded()) {
            throw LvmFailure.classify(result);
        }
        Optional<VolumeGroup> group = LvmReport.groupOfLvReport(result.stdout());
        if (group.isEmpty()) {
            return volumeGroup(volumeGroup).map(empty -> new VolumeGroupContents(empty, List.of()));
        }
        return Optional.of(new VolumeGroupContents(group.get(), LvmReport.logicalVolumes(result.stdout())));
    }

    /** The visible LVs of a volume group (pool internals are left out). */
    public List<LogicalVolume> logicalVolumes(String volumeGroup) {
        CommandResult result = run(volumeGroup, lvsReport(LvmReport.LV_FIELDS, volumeGroup));
        if (!result.succeeded()) {
            throw LvmFailure.classify(result);
        }
        return LvmReport.logicalVolumes(result.stdout());
    }

    public Optional<LogicalVolume> logicalVolume(String volumeGroup, String name) {
        CommandResult result = run(volumeGroup, lvsReport(LvmReport.LV_FIELDS, volumeGroup + "/" + name));
        if (LvmFailure.LOGICAL_VOLUME_NOT_FOUND.isWhy(result)) {
            return Optional.empty();
        }
        if (!result.succeeded()) {
            throw LvmFailure.classify(result);
        }
        return LvmReport.logicalVolumes(result.stdout()).stream().findFirst();
    }

    /**
     * The thin LVs of a volume group with their device ids and their pools' chunk sizes, from one
     * lvs (inactive LVs included: a pool's metadata maps them all the same).
     */
    public List<ThinDevice> thinDevices(String volumeGroup) {
        CommandResult result = run(volumeGroup, lvsReport(LvmReport.THIN_FIELDS, volumeGroup));
        if (!result.succeeded()) {
            throw LvmFailure.classify(result);
        }
        return LvmReport.thinDevices(result.stdout());
    }

    /**
     * The devices of the group's physical volumes, as lvm names them ({@code /dev/vda}); empty
     * when the group does not exist.
     */
    public List<Path> physicalVolumes(String volumeGroup) {
        return volumeGroupReport(volumeGroup, "pv_name").map(LvmReport::physicalVolumes).orElse(List.of());
    }

    /** The group's own tags (not its LVs'); empty when it has none or does not exist. */
    public List<String> volumeGroupTags(String volumeGroup) {
        return volumeGroupReport(volumeGroup, "vg_tags").map(LvmReport::volumeGroupTags).orElse(List.of());
    }

    /** A vgs JSON report of the group with these fields; empty when the group does not exist. */
    private Optional<String> volumeGroupReport(String volumeGroup, String fields) {
        CommandResult result = run(volumeGroup, command(REPORT_TIMEOUT, "vgs", "--reportformat", "json", "-o",
                fields, "--", volumeGroup));
        if (LvmFailure.VOLUME_GROUP_NOT_FOUND.isWhy(result)) {
            return Optional.empty();
        }
        if (!result.succeeded()) {
            throw LvmFailure.classify(result);
        }
        return Optional.of(result.stdout());
    }

    /** Takes {@code remove} off the volume group's own tags and puts {@code add} on, in one vgchange. */
    public void replaceVolumeGroupTags(String volumeGroup, List<String> remove, List<String> add) {
        change(volumeGroup, tagChange("vgchange", volumeGroup, remove, add));
    }

    /** {@code command --deltag ... --addtag ... -- target}: one metadata commit for the whole swap. */
    private static List<String> tagChange(String command, String target, List<String> remove, List<String> add) {
        List<String> args = new ArrayList<>(List.of(command));
        for (String tag : remove) {
            args.add("--deltag");
            args.add(tag);
        }
        addTags(args, add);
        args.add("--");
        args.add(target);
        return args;
    }

    /**
     * Resumes the group's LVs whose device lvm left suspended: an lvm killed (SIGKILL: the OOM
     * killer, a container killed, or the driver's own stop past its grace) between suspending a
     * device and resuming it, as a thin snapshot's lvcreate does to its origin, leaves every read and
     * write of that device waiting for good, the pod's and the driver's alike. {@code lvchange
     * --refresh} reloads and resumes it under the group's lock, so a change of another lvm that
     * suspends the same device on purpose has ended before it runs. Returns the LVs refreshed.
     */
    public List<String> resumeSuspended(String volumeGroup) {
        CommandResult result = run(volumeGroup, lvsReport(LvmReport.STATE_FIELDS, volumeGroup));
        if (LvmFailure.VOLUME_GROUP_NOT_FOUND.isWhy(result)) {
            return List.of();
        }
        if (!result.succeeded()) {
            throw LvmFailure.classify(result);
        }
        List<String> refreshed = LvmReport.suspended(result.stdout());
        for (String name : refreshed) {
            change(volumeGroup, List.of("lvchange", "--refresh", "--", volumeGroup + "/" + name));
        }
        return refreshed;
    }

    /** A linear LV; new LVs have any old signature wiped so no stale filesystem is ever mounted. */
    public void createLinear(String volumeGroup, String name, long sizeBytes, List<String> tags) {
        List<String> args = new ArrayList<>(List.of("lvcreate", "--yes", "--wipesignatures", "y", "--zero", "y",
                "--activate", "y", "--name", name, "--size", sizeBytes + "b"));
        addTags(args, tags);
        args.add("--");
        args.add(volumeGroup);
        change(volumeGroup, args);
    }

    public void createThin(String volumeGroup, String pool, String name, long sizeBytes, List<String> tags) {
        List<String> args = new ArrayList<>(List.of("lvcreate", "--yes", "--activate", "y", "--name", name,
                "--virtualsize", sizeBytes + "b", "--thinpool", pool));
        addTags(args, tags);
        args.add("--");
        args.add(volumeGroup);
        changeActivatingPool(volumeGroup, args);
    }

    /**
     * A thin snapshot of a thin LV. {@code activate} clears LVM's activation-skip flag so that
     * the LV is active now and after a reboot, which volumes made from snapshots need.
     */
    public void createThinSnapshot(String volumeGroup, String origin, String name, List<String> tags, boolean activate) {
        List<String> args = new ArrayList<>(List.of("lvcreate", "--yes", "--snapshot", "--name", name,
                "--setactivationskip", activate ? "n" : "y", "--activate", activate ? "y" : "n"));
        addTags(args, tags);
        args.add("--");
        args.add(volumeGroup + "/" + origin);
        changeActivatingPool(volumeGroup, args);
    }

    public void extend(String volumeGroup, String name, long sizeBytes) {
        change(volumeGroup, List.of("lvextend", "--size", sizeBytes + "b", "--", volumeGroup + "/" + name));
    }

    public void activate(String volumeGroup, String name) {
        changeActivatingPool(volumeGroup, activation(volumeGroup, name));
    }

    /**
     * Activates an LV; false, with nothing changed, when it is a thin LV whose thin device its pool
     * does not hold. lvcreate of a thin LV commits LVM's metadata and the pool's own in two steps;
     * a node that loses power between them boots with an LV that LVM lists, with all its tags, and
     * that can never be activated (the kernel answers ENODATA).
     */
    public boolean activateIfInPool(String volumeGroup, String name) {
        CommandResult result = runActivatingPool(volumeGroup, activation(volumeGroup, name));
        if (LvmFailure.THIN_DEVICE_MISSING.isWhy(result)) {
            return false;
        }
        if (!result.succeeded()) {
            throw LvmFailure.classify(result);
        }
        return true;
    }

    private static List<String> activation(String volumeGroup, String name) {
        return List.of("lvchange", "--activate", "y", "--ignoreactivationskip", "--", volumeGroup + "/" + name);
    }

    /** Removes an LV; lvm itself refuses when it is open, which surfaces as FailedPrecondition. */
    public void remove(String volumeGroup, String name) {
        change(volumeGroup, removal(volumeGroup, name));
    }

    /**
     * Removes an LV, or answers false, with nothing changed, when there is none of that name: one
     * lvm command where an lvs before it would be a second. lvm refuses an open LV (FailedPrecondition).
     */
    public boolean removeIfPresent(String volumeGroup, String name) {
        return removedOrAbsent(runChange(volumeGroup, removal(volumeGroup, name)));
    }

    /** A removal's result: true when it removed the LV, false when there was none; a failure otherwise. */
    private static boolean removedOrAbsent(CommandResult result) {
        if (LvmFailure.LOGICAL_VOLUME_NOT_FOUND.isWhy(result)) {
            return false;
        }
        if (!result.succeeded()) {
            throw LvmFailure.classify(result);
        }
        return true;
    }

    private static List<String> removal(String volumeGroup, String name) {
        return List.of("lvremove", "--yes", "--", volumeGroup + "/" + name);
    }

    public void replaceTags(String volumeGroup, String name, List<String> remove, List<String> add) {
        change(volumeGroup, tagChange("lvchange", volumeGroup + "/" + name, remove, add));
    }

    /** Stores a key/value tag as LVM spells it. */
    public static String tag(String key, String value) {
        return key + "=" + value;
    }

    public static List<String> tags(Map<String, String> keyValues) {
        return keyValues.entrySet().stream().map(e -> tag(e.getKey(), e.getValue())).toList();
    }

    /**
     * The one lvs command line: JSON, sizes in bytes without suffix, flags as 0/1, every LV of the
     * selection with pool internals included ({@code --all}); each parser in LvmReport keeps the
     * rows it is about.
     */
    private Command lvsReport(List<String> fields, String selector) {
        return command(REPORT_TIMEOUT, "lvs", "--all", "--reportformat", "json", "--units", "b", "--nosuffix",
                "--binary", "-o", String.join(",", fields), "--", selector);
    }

    private void changeActivatingPool(String volumeGroup, List<String> args) {
        CommandResult result = runActivatingPool(volumeGroup, args);
        if (!result.succeeded()) {
            throw LvmFailure.classify(result);
        }
    }

    /**
     * A change that may have to activate a thin pool. lvm activates a pool's metadata and data LVs
     * before the pool; an lvm killed between the two (the driver's container OOM-killed inside an
     * lvcreate) leaves the metadata LV active on its own, and from then on lvm refuses to activate
     * the pool "while logical volume ..._tmeta is active", so no thin volume of that pool could be
     * made or activated again until someone deactivated it by hand. That component holds no
     * filesystem and nothing of the driver's; it is deactivated (lvm refuses if something has it
     * open) and the change run once more.
     */
    private CommandResult runActivatingPool(String volumeGroup, List<String> args) {
        CommandResult result = runChange(volumeGroup, args);
        // a pool has two such components, its metadata and its data LV, and lvm names one at a time
        for (int attempt = 0; attempt < POOL_COMPONENTS; attempt++) {
            Optional<String> refusal = LvmFailure.POOL_COMPONENT_ACTIVE.isWhy(result)
                    ? LvmFailure.POOL_COMPONENT_ACTIVE.line(result) : Optional.empty();
            Optional<String> component = refusal.map(Lvm::activeComponent);
            if (component.isEmpty() || !component.get().startsWith(volumeGroup + "/")) {
                return result;
            }
            log.warn("lvm said \"{}\": deactivating {}, left active on its own (a thin pool activation cut short), "
                    + "and trying again", refusal.get(), component.get());
            CommandResult deactivated = runChange(volumeGroup, List.of("lvchange", "--activate", "n", "--",
                    component.get()));
            if (!deactivated.succeeded()) {
                return result;
            }
            result = runChange(volumeGroup, args);
        }
        return result;
    }

    /** The LV named second in lvm's "Activation of logical volume A is prohibited while logical volume B is active." */
    static String activeComponent(String line) {
        String marker = "while logical volume ";
        int start = line.indexOf(marker) + marker.length();
        return line.substring(start, line.lastIndexOf(" is active."));
    }

    private void change(String volumeGroup, List<String> args) {
        CommandResult result = runChange(volumeGroup, args);
        if (!result.succeeded()) {
            throw LvmFailure.classify(result);
        }
    }

    /**
     * Runs {@code work} while no other change of the driver runs on the group: what it reads stays
     * true for its own changes, and callers that would each hold a read of a large group while they
     * wait for their change wait before their read instead.
     */
    public <T> T holdingChangeTurn(String volumeGroup, Supplier<T> work) {
        // before the turn: the start's check needs it, and a call holding it while it waited would stop both
        awaitStartChecks();
        return limiter.holdingChangeTurn(volumeGroup, CHANGE_TIMEOUT, work);
    }

    /** The driver's changes on the group so far. */
    public Changes changes(String volumeGroup) {
        return changes.getOrDefault(volumeGroup, new Changes(0, 0));
    }

    /**
     * A command that changes metadata: the change timeout, and time to finish before SIGKILL;
     * counted in {@link #changes} from before it is queued until it has ended, however it ended.
     */
    private CommandResult runChange(String volumeGroup, List<String> args) {
        awaitStartChecks();
        changes.merge(volumeGroup, new Changes(1, 0), (a, b) -> new Changes(a.started() + 1, a.finished()));
        try {
            Command command = Command.of(lvm, CHANGE_TIMEOUT, args).withStopGrace(CHANGE_STOP_GRACE);
            return limiter.runChange(volumeGroup, command.timeout(), () -> runFinishingPoolChange(volumeGroup, command));
        } finally {
            changes.merge(volumeGroup, new Changes(1, 1), (a, b) -> new Changes(a.started(), a.finished() + 1));
        }
    }

    /**
     * The thin LVs among {@code names} whose device their pool's kernel does not hold: LVM recorded
     * each with its create queued, and the lvm that queued it was killed before it sent it. Such an
     * LV is made in the kernel by whichever lvm next changes the pool, and a snapshot then takes its
     * origin's data of that later moment: a snapshot answered before that would hold data written
     * after its answer. Within the group's change turn, so that no create of the driver's is between
     * its two commits while this compares them ({@link ThinPools} compares LVM's record, read here,
     * with the kernel's); names that are no thin LV are left out.
     */
    public Set<String> queuedInPool(String volumeGroup, Collection<String> names) {
        return limiter.runChange(volumeGroup, REPORT_TIMEOUT,
                () -> thinPools.queued(volumeGroup, recordedPools(volumeGroup), names));
    }

    /**
     * Runs a change, and once more after finishing a thin pool change that a killed lvm left half
     * sent ({@link HalfSentPoolChange}), which lvm refuses to go past: it replays the pool's queued
     * messages before its own change, fails on the first, and changes nothing. Within the change's
     * turn, so no change of the driver's runs between the reading and the finishing. A pool that
     * cannot be proven finished exactly is left as it is, and the change fails with lvm's words.
     */
    private CommandResult runFinishingPoolChange(String volumeGroup, Command command) {
        CommandResult result = runHere(volumeGroup, command);
        Optional<String> line = LvmFailure.POOL_CHANGE_HALF_SENT.isWhy(result)
                ? LvmFailure.POOL_CHANGE_HALF_SENT.line(result) : Optional.empty();
        Optional<String> kernelPool = line.flatMap(HalfSentPoolChange::kernelPoolOf);
        Optional<String> finished = kernelPool.flatMap(target -> thinPools.finishRefusedChange(volumeGroup, target,
                line.get(), recordedPools(volumeGroup), new PoolMetadataLvs(volumeGroup)));
        if (finished.isEmpty()) {
            return result;
        }
        dropFinishedQueue(volumeGroup, finished.get());
        return runHere(volumeGroup, command);
    }

    /**
     * Has lvm drop the messages LVM's metadata still queues for a pool whose change was finished by
     * moving the kernel's transaction id. lvm drops a queue it finds done only when it next creates
     * a thin LV in the pool; a removal before that adds its {@code delete} to the old queue without
     * raising the transaction id (lvm raises it for a queue's first message only), finds the kernel
     * at that id, skips every message, and the removed LV's device stays in the pool with no LV to
     * name it. So a thin LV of one extent is created, inactive, in the pool, and removed at once:
     * two changes lvm finishes in order. Its name is unique, so that one left by a kill between the
     * two never stops the next; such a leftover carries none of the driver's tags.
     */
    private void dropFinishedQueue(String volumeGroup, String pool) {
        String name = QUEUE_DROP_PREFIX + Long.toUnsignedString(System.nanoTime(), 36);
        changeHere(volumeGroup, List.of("lvcreate", "--yes", "--activate", "n", "--name", name, "--virtualsize", "1m",
                "--thinpool", pool, "--", volumeGroup));
        changeHere(volumeGroup, removal(volumeGroup, name));
        log.info("had lvm drop the finished queue of thin pool {}/{} (a thin LV {} made and removed)", volumeGroup,
                pool, name);
    }

    /** A change within the turn the caller holds; a failure is classified and thrown. */
    private void changeHere(String volumeGroup, List<String> args) {
        CommandResult result = runHere(volumeGroup, Command.of(lvm, CHANGE_TIMEOUT, args));
        if (!result.succeeded()) {
            throw LvmFailure.classify(result);
        }
    }

    /**
     * Has every change wait, from now (before the driver's socket opens) until {@link #checkingAtStart}
     * has run. lvm's first removal in a pool that a kill or power cut left half sent commits the
     * removal, replays the done create, and fails: the removed LV's device stays in the pool while
     * LVM no longer records it, and no change of the pool can be finished exactly from then on. So
     * no change of a call may come before the start has finished such pools.
     */
    public void holdChangesForStartCheck() {
        startChecked = new CompletableFuture<>();
    }

    /** Runs the start's {@code checks}, whose changes do not wait; then lets every change go, however they ended. */
    public void checkingAtStart(Runnable checks) {
        startChecker = Thread.currentThread();
        try {
            checks.run();
        } finally {
            startChecker = null;
            startChecked.complete(null);
        }
    }

    /** Waits, within the call's deadline, until the start's checks have run. */
    private void awaitStartChecks() {
        CompletableFuture<Void> checked = startChecked;
        if (checked.isDone() || Thread.currentThread() == startChecker) {
            return;
        }
        Duration wait = runner.callDeadline().remaining().orElse(CHANGE_TIMEOUT);
        try {
            checked.get(Math.max(0, wait.toNanos()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw DriverException.unavailable("the driver is still finishing, after its start, thin pool changes that"
                    + " a kill or power cut left half sent; retry");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw DriverException.aborted("waiting for the start's thin pool checks was interrupted: the driver is "
                    + "shutting down");
        } catch (ExecutionException e) {
            throw new IllegalStateException("the start's checks are only ever completed normally", e);
        }
    }

    /**
     * Finishes the changes of the group's thin pools that a killed lvm or a power cut left half sent,
     * when the driver starts: before its first removal in such a pool (see
     * {@link #holdChangesForStartCheck}), and before a command on the host (dmeventd's autoextend of
     * a filling pool among them) fails on one. Active pools are read through a metadata snapshot,
     * inactive ones through their metadata LV, which lvm activates on its own, read-only. Within the
     * group's change turn. Returns the pools finished.
     */
    public List<String> finishHalfSentPoolChanges(String volumeGroup) {
        return finishHalfSentPoolChanges(volumeGroup, "found at start");
    }

    /**
     * The same at any moment, {@code cause} saying which (in the log): a retried create that finds
     * the LV an lvm killed between the pool's message and its transaction id left, active or
     * activated, leaves the pool one change behind; lvm's next removal in it would then commit the
     * removal and fail on replaying the done create, with a kernel device it no longer records.
     */
    public List<String> finishHalfSentPoolChanges(String volumeGroup, String cause) {
        return limiter.runChange(volumeGroup, CHANGE_TIMEOUT, () -> {
            List<String> finished = thinPools.finishHalfSentChanges(volumeGroup, recordedPools(volumeGroup), cause,
                    new PoolMetadataLvs(volumeGroup));
            finished.forEach(pool -> dropFinishedQueue(volumeGroup, pool));
            return finished;
        });
    }

    /**
     * An inactive pool's metadata LV, through lvm, for {@link ThinPools}: within the group's change
     * turn, which the caller holds. The component's activation and deactivation are never run in a
     * long-lived lvm shell ({@link LvmShell#canRun}).
     */
    private final class PoolMetadataLvs implements ThinPools.InactiveMetadata {

        private final String volumeGroup;

        PoolMetadataLvs(String volumeGroup) {
            this.volumeGroup = volumeGroup;
        }

        /**
         * lvm's component activation: the metadata LV of a pool that is not active, on its own and
         * read-only (lvm refuses it while the pool or any of its thin LVs is active).
         */
        @Override
        public <T> T reading(String pool, Function<Path, T> read) {
            String component = volumeGroup + "/" + pool + "_tmeta";
            changeHere(volumeGroup, List.of("lvchange", "--yes", "--activate", "y", "--", component));
            try {
                return read.apply(new DeviceMapperName(volumeGroup, pool + "_tmeta").path());
            } finally {
                // left active, it would stop the pool's activation; runActivatingPool deactivates it then
                CommandResult deactivated = runHere(volumeGroup, command(CHANGE_TIMEOUT, "lvchange", "--activate", "n",
                        "--", component));
                if (!deactivated.succeeded()) {
                    log.warn("could not deactivate {} after reading it: {}", component, deactivated.diagnostic());
                }
            }
        }

        /**
         * The copy is an LV of the group ({@link #METADATA_COPY_PREFIX} and the pool's name), so it
         * needs the metadata LV's size free in the group; {@code lvconvert --poolmetadata} swaps it
         * in by one commit of LVM's metadata, after which the LV of that name holds the replaced
         * metadata. A copy a killed run left, before or after its swap, is removed first.
         */
        @Override
        public void replacing(String pool, BiConsumer<Path, Path> write) {
            String copy = METADATA_COPY_PREFIX + pool;
            removeCopyIfPresent(copy);
            CommandResult size = runHere(volumeGroup, lvsReport(LvmReport.POOL_METADATA_FIELDS,
                    volumeGroup + "/" + pool));
            if (!size.succeeded()) {
                throw LvmFailure.classify(size);
            }
            long bytes = LvmReport.metadataSize(size.stdout());
            CommandResult made = runHere(volumeGroup, command(CHANGE_TIMEOUT, "lvcreate", "--yes", "--activate", "y",
                    "--wipesignatures", "n", "--name", copy, "--size", bytes + "b", "--", volumeGroup));
            if (!made.succeeded()) {
                DriverException failure = LvmFailure.classify(made);
                throw failure instanceof DriverException.ResourceExhausted
                        ? DriverException.resourceExhausted("thin pool " + volumeGroup + "/" + pool + " has a change "
                        + "left half sent, and finishing it with the pool inactive needs " + bytes + " bytes free in the "
                        + "group for a copy of its metadata: " + failure.getMessage())
                        : failure;
            }
            reading(pool, metadata -> {
                write.accept(metadata, new DeviceMapperName(volumeGroup, copy).path());
                return null;
            });
            changeHere(volumeGroup, List.of("lvchange", "--activate", "n", "--", volumeGroup + "/" + copy));
            changeHere(volumeGroup, List.of("lvconvert", "--yes", "--thinpool", volumeGroup + "/" + pool,
                    "--poolmetadata", volumeGroup + "/" + copy));
            changeHere(volumeGroup, removal(volumeGroup, copy));
        }

        private void removeCopyIfPresent(String copy) {
            if (removedOrAbsent(runHere(volumeGroup, Command.of(lvm, CHANGE_TIMEOUT, removal(volumeGroup, copy))))) {
                log.info("removed {}/{}, a copy of thin pool metadata that an earlier finish left", volumeGroup, copy);
            }
        }
    }

    /** The group's thin pools as LVM's metadata records them; read within a turn the caller holds. */
    private List<HalfSentPoolChange.Recorded> recordedPools(String volumeGroup) {
        CommandResult report = runHere(volumeGroup, lvsReport(LvmReport.POOL_TRANSACTION_FIELDS, volumeGroup));
        if (LvmFailure.VOLUME_GROUP_NOT_FOUND.isWhy(report)) {
            // no group, no pools: the health check says the group is missing
            return List.of();
        }
        if (!report.succeeded()) {
            throw LvmFailure.classify(report);
        }
        return LvmReport.recordedPools(report.stdout());
    }

    /**
     * The LV a successful {@link #createThin} made, as {@code lvs} reports it (LvmShellCheck compares
     * the two): active, not open, its device-mapper path by lvm's naming rule (a '-' in a name doubled),
     * no data written yet, zeroing as its pool does (lvs reports the segment's flag, the pool's).
     * {@code created} is the caller's clock after the create, within a second of
     * the time lvm stored; only snapshots report a creation time, and they are read back from lvm.
     */
    public static LogicalVolume madeThin(String volumeGroup, String name, long sizeBytes, Map<String, String> tags,
                                         LogicalVolume pool, Instant created) {
        Path device = new DeviceMapperName(volumeGroup, name).path();
        return new LogicalVolume(volumeGroup, name, sizeBytes, LogicalVolume.SegmentType.THIN, true, false, false,
                pool.zeroing(), tags, Optional.of(pool.name()), Optional.empty(), created.truncatedTo(ChronoUnit.SECONDS),
                device, OptionalDouble.of(0), OptionalDouble.empty(), LogicalVolume.PoolHealth.OK);
    }

    /**
     * Every lvm report of the driver runs here, and every change through {@link #runChange}, within the
     * group's bound (and changes one at a time): in one of the group's
     * lvm shells where there are shells, otherwise as its own process.
     */
    private CommandResult run(String volumeGroup, Command command) {
        return limiter.run(volumeGroup, command.timeout(), () -> runHere(volumeGroup, command));
    }

    /** A command that has passed the group's bound. */
    private CommandResult runHere(String volumeGroup, Command command) {
        return shells.flatMap(s -> s.run(volumeGroup, command)).orElseGet(() -> runner.run(command));
    }

    private Command command(Duration timeout, String... args) {
        return Command.of(lvm, timeout, args);
    }

    private static void addTags(List<String> args, List<String> tags) {
        for (String tag : tags) {
            args.add("--addtag");
            args.add(tag);
        }
    }
}
