package io.lvmqos.lvm;

/**
 * A thin LV as its pool's metadata knows it: the device id that thin_delta and thin_dump name it
 * by ({@code lvs -o thin_id}), its virtual size, and its pool with the pool's chunk size, the unit
 * in which the pool maps blocks.
 */
public record ThinDevice(String volumeGroup, String name, long thinId, long sizeBytes, String pool,
                         long chunkBytes) {

    public ThinDevice {
        if (thinId < 0 || sizeBytes < 0 || chunkBytes <= 0) {
            throw new IllegalArgumentException("thin device " + volumeGroup + "/" + name + ": id " + thinId
                    + ", size " + sizeBytes + ", chunk " + chunkBytes);
        }
    }
}
