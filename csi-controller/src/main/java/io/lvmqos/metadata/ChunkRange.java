package io.lvmqos.metadata;

/** A run of a thin device's chunks, counted in the pool's chunks from the device's start. */
record ChunkRange(long begin, long length) {

    ChunkRange {
        if (begin < 0 || length <= 0) {
            throw new IllegalArgumentException("chunk range " + begin + "+" + length);
        }
    }

    long end() {
        return begin + length;
    }
}
