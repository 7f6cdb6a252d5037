package io.lvmqos.metadata;

import csi.v1.Csi;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Turns ascending chunk runs into pages of byte ranges: adjacent runs are joined (a run of n chunks
 * is one VARIABLE_LENGTH entry where FIXED_LENGTH would need n), runs before {@code startingOffset}
 * are dropped, a run that holds it starts at the chunk that holds it, nothing passes the volume's
 * end, and a page holds at most {@code maxResults} entries. Memory is one page, whatever the count.
 */
final class BlockPager implements Consumer<ChunkRange> {

    private final long chunkBytes;
    private final long capacityBytes;
    private final long firstChunk;
    private final int maxResults;
    private final Consumer<List<Csi.BlockMetadata>> pages;
    private List<Csi.BlockMetadata> page = new ArrayList<>();
    private long pendingBegin = -1;
    private long pendingEnd = -1;
    private long lastEnd = 0;
    private long entries;

    BlockPager(long chunkBytes, long capacityBytes, long startingOffset, int maxResults,
               Consumer<List<Csi.BlockMetadata>> pages) {
        if (chunkBytes <= 0 || maxResults <= 0 || startingOffset < 0) {
            throw new IllegalArgumentException("chunk " + chunkBytes + ", max " + maxResults + ", start " + startingOffset);
        }
        this.chunkBytes = chunkBytes;
        this.capacityBytes = capacityBytes;
        this.firstChunk = startingOffset / chunkBytes;
        this.maxResults = maxResults;
        this.pages = pages;
    }

    @Override
    public void accept(ChunkRange range) {
        if (range.begin() < lastEnd) {
            throw new IllegalStateException("chunk runs out of order: " + range + " after chunk " + lastEnd);
        }
        lastEnd = range.end();
        long begin = Math.max(range.begin(), firstChunk);
        long end = Math.min(range.end(), ceilDiv(capacityBytes, chunkBytes));
        if (begin >= end) {
            return;
        }
        if (pendingEnd == begin) {
            pendingEnd = end;
            return;
        }
        flushPending();
        pendingBegin = begin;
        pendingEnd = end;
    }

    /** Sends what is left; call once, after the last run. */
    void finish() {
        flushPending();
        if (!page.isEmpty()) {
            pages.accept(page);
            page = new ArrayList<>();
        }
    }

    long entries() {
        return entries;
    }

    private void flushPending() {
        if (pendingBegin < 0) {
            return;
        }
        long offset = pendingBegin * chunkBytes;
        long size = Math.min(pendingEnd * chunkBytes, capacityBytes) - offset;
        page.add(Csi.BlockMetadata.newBuilder().setByteOffset(offset).setSizeBytes(size).build());
        entries++;
        pendingBegin = -1;
        pendingEnd = -1;
        if (page.size() == maxResults) {
            pages.accept(page);
            page = new ArrayList<>();
        }
    }

    private static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }
}
