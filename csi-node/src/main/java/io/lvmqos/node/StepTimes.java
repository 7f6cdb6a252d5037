package io.lvmqos.node;

import org.slf4j.Logger;

/**
 * Where a call's time went, step by step, for the debug log: System.nanoTime deltas kept only
 * when debug logging is on, so that a call not logged pays one boolean test per step.
 */
final class StepTimes {

    private final boolean on;
    private final StringBuilder steps;
    private long last;

    StepTimes(Logger log) {
        this.on = log.isDebugEnabled();
        this.steps = on ? new StringBuilder() : null;
        this.last = on ? System.nanoTime() : 0;
    }

    /** Ends the step named {@code name}: the time since the previous one, in microseconds. */
    void step(String name) {
        if (!on) {
            return;
        }
        long now = System.nanoTime();
        steps.append(steps.isEmpty() ? "" : ", ").append(name).append(' ').append((now - last) / 1000).append(" us");
        last = now;
    }

    /** Logs the steps at debug as "{what}: step N us, ...". */
    void log(Logger log, String what) {
        if (on) {
            log.debug("{}: {}", what, steps);
        }
    }
}
