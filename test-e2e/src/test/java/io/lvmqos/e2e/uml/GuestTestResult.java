package io.lvmqos.e2e.uml;

import java.time.Duration;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

/**
 * One guest-side test's outcome, as the guest's JUnit legacy XML report gives it.
 *
 * @param className the test class
 * @param name the test's display name, e.g. {@code volumeGroupExists()}
 * @param status the outcome
 * @param message the failure's or skip's message, empty if none
 * @param guestStackTrace the failure's stack trace as printed in the guest, empty if none
 * @param time how long the test ran in the guest
 */
public record GuestTestResult(
        String className, String name, Status status, String message, String guestStackTrace, Duration time) {

    public enum Status {
        PASSED,
        /** An assertion failed. */
        FAILED,
        /** The test threw something other than an assertion error. */
        ERRORED,
        SKIPPED
    }

    /** {@code GuestSmokeCheck.volumeGroupExists()}. */
    public String displayName() {
        return className.substring(className.lastIndexOf('.') + 1) + "." + name;
    }

    /**
     * Replays the outcome on the host: returns if it passed, aborts if it was skipped, and otherwise
     * throws with the guest's stack trace as the message (the host's own frames would only point here).
     */
    public void verify() {
        switch (status) {
            case PASSED -> {
            }
            case SKIPPED -> throw new TestAbortedException(displayName() + " skipped in the guest: " + message);
            case FAILED -> throw withoutHostFrames(new AssertionFailedError(describe()));
            case ERRORED -> throw withoutHostFrames(new GuestError(describe()));
        }
    }

    private String describe() {
        // Named here because host reports may show a dynamic test by its index only.
        return displayName() + " in the guest: " + (guestStackTrace.isBlank() ? message : guestStackTrace.strip());
    }

    private static <T extends Throwable> T withoutHostFrames(T throwable) {
        throwable.setStackTrace(new StackTraceElement[0]);
        return throwable;
    }

    /** A guest-side test that threw something other than an assertion error. */
    public static final class GuestError extends RuntimeException {
        GuestError(String message) {
            super(message);
        }
    }
}
