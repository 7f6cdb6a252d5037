package io.lvmqos.volume;

import java.util.Objects;
import java.util.Optional;

/**
 * A change of a volume's limits, as a VolumeAttributesClass (ControllerModifyVolume's mutable
 * parameters) asks for it, per direction: empty leaves that limit as it is (the class does not
 * name it), {@link Limit#UNLIMITED} lifts it (the class says {@value QosKeys#NO_LIMIT}),
 * anything else replaces it. {@code guarantee} holds the {@link Guarantee} parts the class sets (a
 * value) or removes (the class says {@value QosKeys#NO_GUARANTEE}).
 */
public record QosChange(Optional<Limit> readBps, Optional<Limit> writeBps, Optional<Limit> readIops,
                        Optional<Limit> writeIops, Guarantee.Change guarantee) {

    public static final QosChange NOTHING =
            new QosChange(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty());

    public QosChange {
        Objects.requireNonNull(readBps);
        Objects.requireNonNull(writeBps);
        Objects.requireNonNull(readIops);
        Objects.requireNonNull(writeIops);
        Objects.requireNonNull(guarantee);
    }

    /** A change of caps only. */
    public QosChange(Optional<Limit> readBps, Optional<Limit> writeBps, Optional<Limit> readIops,
                     Optional<Limit> writeIops) {
        this(readBps, writeBps, readIops, writeIops, Guarantee.Change.NONE);
    }
}
