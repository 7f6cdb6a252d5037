package io.lvmqos.identity;

import io.lvmqos.lvm.Lvm;
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
 * Whether the volume groups answer, checked in the background so that Probe answers at once
 * and never waits behind an LVM lock (the livenessprobe sidecar restarts plugins whose Probe
 * hangs).
 */
public final class HealthCheck implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(HealthCheck.class);

    /** The last verdict: empty reason means ready. */
    public record Verdict(boolean ready, Optional<String> reason) {
    }

    private final Lvm lvm;
    private final List<String> volumeGroups;
    private final AtomicReference<Verdict> verdict =
            new AtomicReference<>(new Verdict(false, Optional.of("the first health check has not finished yet")));
    private final ScheduledExecutorService scheduler =
            Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().daemon().name("health-check").factory());

    public HealthCheck(Lvm lvm, List<String> volumeGroups) {
        this.lvm = lvm;
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
            List<String> missing = volumeGroups.stream().filter(vg -> lvm.volumeGroup(vg).isEmpty()).toList();
            next = missing.isEmpty()
                    ? new Verdict(true, Optional.empty())
                    : new Verdict(false, Optional.of("volume group(s) " + missing + " not found"));
        } catch (RuntimeException e) {
            next = new Verdict(false, Optional.of("lvm does not answer: " + e.getMessage()));
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
