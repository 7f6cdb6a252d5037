package io.lvmqos.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class LvmNamesTest {

    static Stream<String> csiNames() {
        return Stream.of("pvc-0f1e2d3c-4b5a-6978-8695-a4b3c2d1e0f9", "a", "", "Ünïcödé ボリューム", "💾",
                "UPPER/lower.dots-dashes_underscores", "x".repeat(128), "ボ".repeat(128), "--", "..");
    }

    @ParameterizedTest
    @MethodSource("csiNames")
    void theSameNameAlwaysGivesTheSameLvName(String name) {
        assertEquals(LvmNames.volumeLvName(name), LvmNames.volumeLvName(new String(name)));
        assertEquals(LvmNames.snapshotLvName(name), LvmNames.snapshotLvName(new String(name)));
    }

    @ParameterizedTest
    @MethodSource("csiNames")
    void volumeLvNamesStartWithVolAndUseOnlyLowercaseDigitsAndUnderscore(String name) {
        assertTrue(LvmNames.volumeLvName(name).matches("vol_[a-z0-9_]+"), LvmNames.volumeLvName(name));
    }

    @ParameterizedTest
    @MethodSource("csiNames")
    void snapshotLvNamesStartWithSnapAndUseOnlyLowercaseDigitsAndUnderscore(String name) {
        assertTrue(LvmNames.snapshotLvName(name).matches("snap_[a-z0-9_]+"), LvmNames.snapshotLvName(name));
    }

    @ParameterizedTest
    @MethodSource("csiNames")
    void volumeLvNamesAreAtMost61Characters(String name) {
        assertTrue(LvmNames.volumeLvName(name).length() <= 61, LvmNames.volumeLvName(name));
    }

    // snap_ is one character longer than vol_: 5 + 32 readable + 1 + 24 digest = 62
    @ParameterizedTest
    @MethodSource("csiNames")
    void snapshotLvNamesAreAtMost62Characters(String name) {
        assertTrue(LvmNames.snapshotLvName(name).length() <= 62, LvmNames.snapshotLvName(name));
    }

    @ParameterizedTest
    @MethodSource("csiNames")
    void generatedNamesAreValidLvmNames(String name) {
        assertTrue(LvmNames.isValidName(LvmNames.volumeLvName(name)));
        assertTrue(LvmNames.isValidName(LvmNames.snapshotLvName(name)));
    }

    @Test
    void theReadablePartShowsTheNameLowercased() {
        assertTrue(LvmNames.volumeLvName("PVC-1234").startsWith("vol_pvc_1234_"), LvmNames.volumeLvName("PVC-1234"));
    }

    @Test
    void namesDifferingOnlyInCharactersTheReadablePartDropsStayDistinct() {
        List<String> names = List.of("pvc-1", "pvc_1", "pvc.1", "pvc/1", "PVC-1", "pvc 1", "pvcé1", "pvc💾1");
        Set<String> lvNames = new HashSet<>();
        names.forEach(name -> lvNames.add(LvmNames.volumeLvName(name)));
        assertEquals(names.size(), lvNames.size(), lvNames.toString());
    }

    @Test
    void namesDifferingOnlyBeyondTheReadablePartStayDistinct() {
        String prefix = "a".repeat(100);
        assertFalse(LvmNames.volumeLvName(prefix + "b").equals(LvmNames.volumeLvName(prefix + "c")));
    }

    @Test
    void aVolumeAndASnapshotOfTheSameNameDiffer() {
        assertFalse(LvmNames.volumeLvName("x").equals(LvmNames.snapshotLvName("x")));
    }

    @Test
    void volumeLvNamesAreRecognised() {
        assertTrue(LvmNames.isVolumeLvName(LvmNames.volumeLvName("x")));
        assertFalse(LvmNames.isSnapshotLvName(LvmNames.volumeLvName("x")));
    }

    @Test
    void snapshotLvNamesAreRecognised() {
        assertTrue(LvmNames.isSnapshotLvName(LvmNames.snapshotLvName("x")));
        assertFalse(LvmNames.isVolumeLvName(LvmNames.snapshotLvName("x")));
    }

    @ParameterizedTest(name = "\"{0}\"")
    @ValueSource(strings = {"vg0", "thinpool", "a", "A+_.-z", "_x", ".x", "0",
            "a23456789012345678901234567890123456789012345678901234567890123"})
    void acceptsValidNames(String name) {
        assertTrue(LvmNames.isValidName(name));
    }

    @ParameterizedTest(name = "\"{0}\"")
    @ValueSource(strings = {"", ".", "..", "-a", "a/b", "a b", "a:b", "é", "snapshot", "snapshot1", "pvmove0",
            "a234567890123456789012345678901234567890123456789012345678901234"})
    void refusesInvalidNames(String name) {
        assertFalse(LvmNames.isValidName(name));
    }

    @Test
    void requireValidNameThrowsForAnInvalidName() {
        assertThrows(IllegalArgumentException.class, () -> LvmNames.requireValidName("a/b"));
    }
}
