package io.lvmqos.cgroup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class IoPressureTest {

    @Test
    void readsTheSomeAndFullTotals() {
        IoPressure pressure = IoPressure.parse("""
                some avg10=41.52 avg60=12.01 avg300=2.77 total=5861042
                full avg10=40.97 avg60=11.86 avg300=2.73 total=5790335
                """);
        assertEquals(new IoPressure(5861042, OptionalLong.of(5790335)), pressure);
    }

    @Test
    void aFileWithoutAFullLineHasOnlySome() {
        assertEquals(new IoPressure(12, OptionalLong.empty()),
                IoPressure.parse("some avg10=0.00 avg60=0.00 avg300=0.00 total=12\n"));
    }

    @Test
    void withoutASomeTotalItIsAnError() {
        var e = assertThrows(IllegalArgumentException.class, () -> IoPressure.parse(""));
        assertTrue(e.getMessage().contains("no 'some ... total=N' line"), e.getMessage());
        var bad = assertThrows(IllegalArgumentException.class, () -> IoPressure.parse("some total=1.5\n"));
        assertTrue(bad.getMessage().contains("'total=1.5'"), bad.getMessage());
    }
}
