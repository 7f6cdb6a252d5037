package io.lvmqos.volume;

import io.lvmqos.lvm.LogicalVolume;
import io.lvmqos.lvm.Lvm;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalDouble;

/**
 * Whether a thin volume's pool has run out of space, for NodeGetVolumeStats. A pool out of data
 * space holds every write that needs a new block (for dm-thin's no_space_timeout, 60 s, then fails
 * it), or fails it at once with {@code --errorwhenfull y}; a pool whose metadata is full turns
 * read-only and fails them all. Either way the pod's writes stall or fail until the operator extends
 * the pool, and the filesystem on top may shut itself down: see docs/faults.md, "A full thin pool".
 * NodeGetVolumeStats reports it as the volume's condition and CreateVolume refuses a thin volume into
 * such a pool. Kubelet asks about every volume about once a minute, many at once: calls about volumes of
 * the same pool that arrive together share one {@code lvs} of the pool ({@link SharedReads}), each
 * still answered from a read that started after it asked.
 */
public final class ThinPoolSpace {

    private record PoolName(String volumeGroup, String pool) {
    }

    private final SharedReads<PoolName, Optional<LogicalVolume>> pools;

    public ThinPoolSpace(Lvm lvm) {
        this.pools = new SharedReads<>(name -> lvm.logicalVolume(name.volumeGroup(), name.pool()));
    }

    /** What is wrong with the volume's thin pool, or empty when it has room (or the volume is linear). */
    public Optional<String> problem(ManagedVolume volume) {
        if (!volume.lv().isThin() || volume.lv().pool().isEmpty()) {
            return Optional.empty();
        }
        return pools.read(new PoolName(volume.id().volumeGroup(), volume.lv().pool().get()))
                .flatMap(ThinPoolSpace::problemOf);
    }

    /** What is wrong with the pool, or empty when it has data and metadata space left. */
    public static Optional<String> problemOf(LogicalVolume pool) {
        boolean metadataFull = pool.health() == LogicalVolume.PoolHealth.METADATA_READ_ONLY
                || percent(pool.metadataPercent()) >= 100;
        // out of metadata space the pool goes read-only, and when it cannot even flag itself for a check,
        // to fail mode ('F'): lvs then gives no percentages at all (measured, docs/faults.md)
        String state = switch (pool.health()) {
            case OUT_OF_DATA_SPACE -> "is out of data space";
            case METADATA_READ_ONLY -> "has its metadata read-only";
            case FAILED -> "has failed";
            case OK -> metadataFull || percent(pool.dataPercent()) >= 100 ? "is full" : "";
        };
        if (state.isEmpty()) {
            return Optional.empty();
        }
        String effect = switch (pool.health()) {
            case OUT_OF_DATA_SPACE -> "writes that need new blocks wait (dm-thin's no_space_timeout, 60 s by default)"
                    + " and then fail, or fail at once if the pool was set with lvchange --errorwhenfull y";
            case METADATA_READ_ONLY -> "out of metadata space, or damaged: writes that need new blocks fail";
            case FAILED -> "every I/O of its volumes fails";
            case OK -> "writes that need new blocks will stall or fail";
        };
        String extend = !metadataFull && pool.health() != LogicalVolume.PoolHealth.FAILED
                ? "extend the pool: lvextend -L +<size> " + pool.lvmPath()
                : "extend the pool's metadata: lvextend --poolmetadatasize +<size> " + pool.lvmPath() + "; if the kernel"
                        + " refuses to grow it until repaired, stop the pods using the pool, deactivate it and run"
                        + " lvconvert --repair " + pool.lvmPath() + " first";
        return Optional.of("thin pool " + pool.lvmPath() + " " + state + " (data " + shown(pool.dataPercent())
                + ", metadata " + shown(pool.metadataPercent()) + "): " + effect + "; " + extend);
    }

    private static double percent(OptionalDouble value) {
        return value.orElse(0);
    }

    public static String shown(OptionalDouble percent) {
        return percent.isPresent() ? String.format(Locale.ROOT, "%.2f%%", percent.getAsDouble()) : "unknown";
    }
}
