package io.lvmqos.e2e.demo;

import java.util.Optional;

/**
 * A pod's io.max line for a volume's device just before and just after its NodeUnpublishVolume, as
 * step 5 reports it: "lifted" only for a line that was there and went, and, for a volume without
 * limits, that there never was one.
 *
 * @param before the line before the unpublish, if any
 * @param after the line after it, if any
 * @param limited whether the volume's StorageClass has limits, so that a line belongs there
 */
record IoMaxAtUnpublish(Optional<String> before, Optional<String> after, boolean limited) {

    /** The words after "io.max line for MAJ:MIN: "; capitals for what is wrong. */
    String shown() {
        if (before.isPresent()) {
            return after.isPresent() ? "STILL THERE" : "lifted";
        }
        if (after.isPresent()) {
            return "APPEARED at the unpublish";
        }
        return limited ? "MISSING already before the unpublish" : "none, before or after (no limits)";
    }

    /** What is wrong, to follow "POD's io.max ", or empty. */
    Optional<String> failure() {
        if (after.isPresent()) {
            return Optional.of("has \"" + after.get() + "\" after the unpublish");
        }
        if (before.isEmpty() && limited) {
            return Optional.of("had no line for the limited volume's device before the unpublish");
        }
        if (before.isPresent() && !limited) {
            return Optional.of("had \"" + before.get() + "\" though the volume has no limits");
        }
        return Optional.empty();
    }
}
