package io.lvmqos.controller;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.lvmqos.errors.DriverException;
import io.lvmqos.lvm.LogicalVolume;
import io.lvmqos.volume.LvmNames;
import io.lvmqos.volume.ManagedVolume;
import io.lvmqos.volume.VolumeTags;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PageTest {

    static final List<ManagedVolume> FIVE = Stream.of("pvc-a", "pvc-b", "pvc-c", "pvc-d", "pvc-e")
            .map(PageTest::volume).sorted(Comparator.comparing(v -> v.id().toString())).toList();

    static ManagedVolume volume(String csiName) {
        String lvName = LvmNames.volumeLvName(csiName);
        LogicalVolume lv = new LogicalVolume("vg0", lvName, 1L << 30, LogicalVolume.SegmentType.LINEAR, true, false,
                false, Optional.empty(), Map.of(VolumeTags.NAME, VolumeTags.encodeName(csiName)), Optional.empty(),
                Optional.empty(), Instant.parse("2026-12-02T11:09:16Z"), Path.of("/dev/mapper/vg0-" + lvName),
                OptionalDouble.empty(), OptionalDouble.empty(), LogicalVolume.PoolHealth.OK);
        return ManagedVolume.from("node1", lv).orElseThrow();
    }

    static String id(int index) {
        return FIVE.get(index).id().toString();
    }

    @Test
    void zeroMaxEntriesIsEverything() {
        Page<ManagedVolume> page = Page.of(FIVE, 0, "");
        assertEquals(FIVE, page.items());
        assertEquals("", page.nextToken());
    }

    @Test
    void aFirstPageEndsWithATokenForTheNextEntry() {
        Page<ManagedVolume> page = Page.of(FIVE, 2, "");
        assertEquals(FIVE.subList(0, 2), page.items());
        assertEquals(id(2), page.nextToken());
    }

    @Test
    void aTokenStartsThePageAtItsEntry() {
        Page<ManagedVolume> page = Page.of(FIVE, 2, id(2));
        assertEquals(FIVE.subList(2, 4), page.items());
        assertEquals(id(4), page.nextToken());
    }

    @Test
    void followingTheTokensVisitsEveryVolumeOnce() {
        List<ManagedVolume> seen = new ArrayList<>();
        String token = "";
        int pages = 0;
        do {
            Page<ManagedVolume> page = Page.of(FIVE, 2, token);
            seen.addAll(page.items());
            token = page.nextToken();
            pages++;
        } while (!token.isEmpty());
        assertEquals(FIVE, seen);
        assertEquals(3, pages);
    }

    @Test
    void aMaximumAboveTheCountIsEverythingWithoutToken() {
        Page<ManagedVolume> page = Page.of(FIVE, 10, "");
        assertEquals(FIVE, page.items());
        assertEquals("", page.nextToken());
    }

    @Test
    void aTokenWhoseVolumeWasRemovedStartsAtTheNextOne() {
        List<ManagedVolume> withoutThird = new ArrayList<>(FIVE);
        withoutThird.remove(2);
        assertEquals(List.of(FIVE.get(3), FIVE.get(4)), Page.of(withoutThird, 0, id(2)).items());
    }

    @Test
    void anEmptyListingIsAnEmptyPage() {
        Page<ManagedVolume> page = Page.of(List.of(), 3, "");
        assertEquals(List.of(), page.items());
        assertEquals("", page.nextToken());
    }

    @ParameterizedTest(name = "\"{0}\"")
    @ValueSource(strings = {"invalid-token", "1", "LVMQOS/node1/vg0/vol_x", " lvmqos"})
    void aTokenWeDidNotIssueIsAborted(String token) {
        assertThrows(DriverException.Aborted.class, () -> Page.of(FIVE, 2, token));
    }

    @Test
    void aNegativeMaximumIsInvalid() {
        assertThrows(DriverException.InvalidArgument.class, () -> Page.of(FIVE, -1, ""));
    }
}
