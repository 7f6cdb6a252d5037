package io.lvmqos.volume;

import java.util.OptionalLong;

/**
 * Limits in force on one device for one pod, in bytes per second and I/O operations per second
 * per direction; empty means no limit in that direction.
 */
public record IoLimits(OptionalLong readBps, OptionalLong writeBps, OptionalLong readIops, OptionalLong writeIops) {

    public static final IoLimits NONE =
            new IoLimits(OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty());

    public boolean isUnlimited() {
        return readBps.isEmpty() && writeBps.isEmpty() && readIops.isEmpty() && writeIops.isEmpty();
    }

    @Override
    public String toString() {
        return "rbps=" + show(readBps) + " wbps=" + show(writeBps) + " riops=" + show(readIops)
                + " wiops=" + show(writeIops);
    }

    private static String show(OptionalLong value) {
        return value.isPresent() ? Long.toString(value.getAsLong()) : "max";
    }
}
