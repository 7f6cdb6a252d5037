package io.lvmqos.identity;

import io.lvmqos.lvm.VolumeGroup;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether this node's volume groups exist, checked in the background so that Probe answers at once
 * and never waits behind an LVM lock.
 *
 * <p>Probe's answer is what the livenessprobe sidecar turns into the container's liveness, and a
 * failed liveness restarts the container, which kills whatever lvm is running in it. So the verdict
 * means "this process serves", never "LVM is fast": it turns not-ready only when lvm has answered
 * that a volume group does not exist (a node this DaemonSet should not run on, or one whose disks
 * are gone), and stays as it was while lvm is slow or fails, which is only logged. Every RPC that
 * needs LVM is bounded by its own deadline either way.
 */
public final class HealthCheck implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(HealthCheck.class);

    /** The last verdict: empty reason means ready. */
    public record Verdict(boolean ready, Optional<String> reason) {
    }

    /** How a volume group is looked up: {@code Lvm::volumeGroup}. */
    @FunctionalInterface
    public interface VolumeGroups {
        Optional<VolumeGroup> find(String name);
    }

    private final VolumeGroups lookup;
    private final List<String> volumeGroups;
    // Serving from the start: a first check stuck behind a held VG lock must not fail liveness.
    private final AtomicReference<Verdict> verdict = new AtomicReference<>(new Verdict(true, Optional.empty()));
    private final ScheduledExecutorService scheduler =
            Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().daemon().name("health-check").factory());

    public HealthCheck(VolumeGroups lookup, List<String> volumeGroups) {
        this.lookup = lookup;
        this.volumeGroups = List.copyOf(volumeGroups);
    }

    public void start(Duration period) {
        scheduler.scheduleWithFixedDelay(this::check, 0, period.toMillis(), TimeUnit.MILLISECONDS);
    }

    public Verdict verdict() {
        return verdict.get();
    }

    /** Runs one check now; public so that tests and start-up can wait for a first verdict. */
    public Verdict check() {
        Verdict next;
        try {
            List<String> missing = volumeGroups.stream().filter(vg -> lookup.find(vg).isEmpty()).toList();
            next = missing.isEmpty()
                    ? new Verdict(true, Optional.empty())
                    : new Verdict(false, Optional.of("volume group(s) " + missing + " not found"));
        } catch (RuntimeException e) {
            log.warn("health check: lvm did not answer ({}); Probe keeps its last answer", e.getMessage());
            return verdict.get();
        }
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

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
