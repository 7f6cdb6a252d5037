package io.lvmqos.metadata;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import csi.v1.Csi;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class BlockPagerTest {

    private static final long CHUNK = 65536;

    private final List<List<Csi.BlockMetadata>> pages = new ArrayList<>();

    private BlockPager pager(long capacity, long start, int max) {
        return new BlockPager(CHUNK, capacity, start, max, page -> pages.add(List.copyOf(page)));
    }

    private static Csi.BlockMetadata range(long firstChunk, long chunks) {
        return Csi.BlockMetadata.newBuilder().setByteOffset(firstChunk * CHUNK).setSizeBytes(chunks * CHUNK).build();
    }

    @Test
    void adjacentRunsBecomeOneRangeAndGapsSplitThem() {
        BlockPager pager = pager(100 * CHUNK, 0, 10);
        pager.accept(new ChunkRange(2, 1));
        pager.accept(new ChunkRange(3, 2));
        pager.accept(new ChunkRange(7, 1));
        pager.finish();
        assertEquals(List.of(List.of(range(2, 3), range(7, 1))), pages);
    }

    @Test
    void aPageHoldsAtMostMaxResults() {
        BlockPager pager = pager(100 * CHUNK, 0, 2);
        for (long c = 0; c < 10; c += 2) {
            pager.accept(new ChunkRange(c, 1));
        }
        pager.finish();
        assertEquals(List.of(2, 2, 1), pages.stream().map(List::size).toList());
        assertEquals(5, pager.entries());
    }

    @Test
    void aStartingOffsetDropsEarlierRunsAndCutsTheOneThatHoldsItAtItsChunk() {
        BlockPager pager = pager(100 * CHUNK, 5 * CHUNK + 100, 10);
        pager.accept(new ChunkRange(0, 2));
        pager.accept(new ChunkRange(4, 3));
        pager.accept(new ChunkRange(9, 1));
        pager.finish();
        assertEquals(List.of(List.of(range(5, 2), range(9, 1))), pages);
    }

    @Test
    void nothingPassesTheVolumesEnd() {
        BlockPager pager = pager(10 * CHUNK - 4096, 0, 10);
        pager.accept(new ChunkRange(8, 5));
        pager.finish();
        assertEquals(List.of(List.of(Csi.BlockMetadata.newBuilder().setByteOffset(8 * CHUNK)
                .setSizeBytes(2 * CHUNK - 4096).build())), pages);
    }

    @Test
    void noRunsMeanNoPages() {
        pager(10 * CHUNK, 0, 10).finish();
        assertEquals(List.of(), pages);
    }

    @Test
    void runsOutOfOrderAreABugNotSilentlyMerged() {
        BlockPager pager = pager(100 * CHUNK, 0, 10);
        pager.accept(new ChunkRange(5, 1));
        assertThrows(IllegalStateException.class, () -> pager.accept(new ChunkRange(2, 1)));
    }
}
