package io.lvmqos.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class IoCostWeightTest {

    @Test
    void theDefaultIsTheKernels() {
        assertEquals(100, IoCostWeight.DEFAULT.value());
        assertEquals("100", IoCostWeight.DEFAULT.toString());
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 100, 9999, 10000})
    void takesTheKernelsRange(int value) {
        assertEquals(value, new IoCostWeight(value).value());
        assertEquals(new IoCostWeight(value), IoCostWeight.parse(Integer.toString(value)));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1, 10001, Integer.MAX_VALUE, Integer.MIN_VALUE})
    void refusesWhatTheKernelWouldNot(int value) {
        assertEquals("io.cost weight " + value + " is out of the kernel's range 1..10000",
                assertThrows(IllegalArgumentException.class, () -> new IoCostWeight(value)).getMessage());
    }

    @Test
    void nearestStaysInTheRange() {
        assertEquals(new IoCostWeight(1), IoCostWeight.nearest(0));
        assertEquals(new IoCostWeight(1), IoCostWeight.nearest(Long.MIN_VALUE));
        assertEquals(new IoCostWeight(437), IoCostWeight.nearest(437));
        assertEquals(new IoCostWeight(10000), IoCostWeight.nearest(10001));
        assertEquals(new IoCostWeight(10000), IoCostWeight.nearest(Long.MAX_VALUE));
    }
}
