package io.lvmqos.identity;

import io.lvmqos.errors.DriverException;
import io.lvmqos.lvm.VolumeGroup;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether this node's volume groups exist and lvm answers, checked in the background so that Probe
 * answers at once and never waits behind an LVM lock.
 *
 * <p>Probe's answer is what the livenessprobe sidecar turns into the container's liveness, and a
 * failed liveness restarts the container. So the verdict means "this process serves", never "LVM is
 * fast": a slow lvm, or one that fails, leaves it as it was (and is logged). It turns not-ready in
 * two cases only: lvm has answered that a volume group does not exist (a node this DaemonSet should
 * not run on, or one whose disks are gone: the check runs again every period, so the group's
 * appearance turns Probe ready with no restart), or lvm has given the check no answer at all for longer
 * than {@code unanswered} (a VG lock held for good, an lvm stuck in the kernel): a process whose
 * every LVM call can only end by its deadline does not serve, and a verdict kept from before that
 * would be stale. The check's own vgs does not queue behind the driver's other lvm commands
 * ({@code Lvm#volumeGroupOutOfTurn}), so a burst of calls is not taken for a stuck lvm.
 */
public final class HealthCheck implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(HealthCheck.class);

    /**
     * The node label that places the node plugin in the chart and the kustomize base: where the operator
     * says the volume groups are. Named in the not-ready reason, which is what an operator reads first.
     */
    public static final String NODE_LABEL = "lvmqos.csi.io/volume-groups";

    /** How long lvm may leave the check unanswered before Probe says not ready, unless told otherwise. */
    public static final Duration DEFAULT_UNANSWERED = Duration.ofSeconds(30);

    /** The last verdict: empty reason means ready. */
    public record Verdict(boolean ready, Optional<String> reason) {
    }

    /** How a volume group is looked up: {@code Lvm::volumeGroupOutOfTurn}. */
    @FunctionalInterface
    public interface VolumeGroups {
        Optional<VolumeGroup> find(String name);
    }

    private final VolumeGroups lookup;
    private final List<String> volumeGroups;
    private final Duration unanswered;
    private final LongSupplier nanoClock;
    // Serving from the start: a first check stuck behind a held VG lock fails only once it is overdue.
    private final AtomicReference<Verdict> verdict = new AtomicReference<>(new Verdict(true, Optional.empty()));
    /** When the oldest check that lvm has not answered yet began; empty while lvm has answered the last one. */
    private final AtomicReference<OptionalLong> waitingSince = new AtomicReference<>(OptionalLong.empty());
    private final AtomicBoolean overdueLogged = new AtomicBoolean();
    /** A fault of the deployment found at start-up, which no later check can clear. */
    private volatile Optional<String> misconfiguration = Optional.empty();
    private final ScheduledExecutorService scheduler =
            Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().daemon().name("health-check").factory());

    public HealthCheck(VolumeGroups lookup, List<String> volumeGroups, Duration unanswered, LongSupplier nanoClock) {
        if (unanswered.isNegative() || unanswered.isZero()) {
            throw new IllegalArgumentException("the unanswered bound must be positive: " + unanswered);
        }
        this.lookup = lookup;
        this.volumeGroups = List.copyOf(volumeGroups);
        this.unanswered = unanswered;
        this.nanoClock = nanoClock;
    }

    public HealthCheck(VolumeGroups lookup, List<String> volumeGroups, Duration unanswered) {
        this(lookup, volumeGroups, unanswered, System::nanoTime);
    }

    public void start(Duration period) {
        start(Duration.ZERO, period);
    }

    /**
     * Checks every {@code period}, the first time after {@code firstAfter}: the driver runs its
     * first check itself at start-up, before the start-up index, rather than beside it.
     */
    public void start(Duration firstAfter, Duration period) {
        scheduler.scheduleWithFixedDelay(this::check, firstAfter.toMillis(), period.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Probe answers not ready for good, with this reason: the process runs but cannot serve as deployed
     * (a restart, which a failed liveness brings, shows the same reason again in the log).
     */
    public void misconfigured(String reason) {
        misconfiguration = Optional.of(reason);
        log.error("not ready: {}", reason);
    }

    /** Probe's answer: the last check's verdict, unless lvm has left the checks unanswered past the bound. */
    public Verdict verdict() {
        if (misconfiguration.isPresent()) {
            return new Verdict(false, misconfiguration);
        }
        OptionalLong since = waitingSince.get();
        if (since.isPresent()) {
            long waited = nanoClock.getAsLong() - since.getAsLong();
            if (waited > unanswered.toNanos()) {
                Verdict overdue = new Verdict(false, Optional.of("lvm has not answered for "
                        + TimeUnit.NANOSECONDS.toSeconds(waited) + " s (vgs of " + volumeGroups + "; the bound is "
                        + unanswered.toSeconds() + " s): is a volume group's lock held?"));
                if (overdueLogged.compareAndSet(false, true)) {
                    log.warn("not ready: {}", overdue.reason().orElseThrow());
                }
                return overdue;
            }
        }
        return verdict.get();
    }

    /** Runs one check now; public so that tests and start-up can wait for a first verdict. */
    public Verdict check() {
        waitingSince.compareAndSet(OptionalLong.empty(), OptionalLong.of(nanoClock.getAsLong()));
        Verdict next;
        try {
            List<String> missing = volumeGroups.stream().filter(vg -> lookup.find(vg).isEmpty()).toList();
            next = missing.isEmpty()
                    ? new Verdict(true, Optional.empty())
                    : new Verdict(false, Optional.of("volume group(s) " + missing + " not found on this node: create "
                            + "them, or keep the node plugin off this node (its DaemonSet's node label, "
                            + NODE_LABEL + "=true by default, deploy/README.md); Probe turns ready by itself once lvm "
                            + "finds them"));
        } catch (DriverException.DeadlineExceeded e) {
            // no answer: the clock of the oldest unanswered check keeps running
            log.warn("health check: lvm did not answer ({}); Probe keeps its last answer for at most {} s",
                    e.getMessage(), unanswered.toSeconds());
            return verdict();
        } catch (RuntimeException e) {
            answered();
            log.warn("health check: lvm failed ({}); Probe keeps its last answer", e.getMessage());
            return verdict();
        }
        answered();
        Verdict previous = verdict.getAndSet(next);
        if (!next.equals(previous)) {
            if (next.ready()) {
                log.info("ready: volume groups {} answer", volumeGroups);
            } else {
                log.warn("not ready: {}", next.reason().orElse(""));
            }
        }
        return next;
    }

    private void answered() {
        waitingSince.set(OptionalLong.empty());
        if (overdueLogged.compareAndSet(true, false)) {
            log.info("lvm answers again");
        }
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
