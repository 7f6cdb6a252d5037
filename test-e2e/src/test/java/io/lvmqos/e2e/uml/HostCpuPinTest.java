package io.lvmqos.e2e.uml;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class HostCpuPinTest {

    @Test
    void readsTheKernelsCpuListSyntax() {
        assertEquals(List.of(0, 1, 2, 3, 8, 10, 11), HostCpuPin.parseList(" 0-3,8,10-11\n"));
        assertEquals(List.of(5), HostCpuPin.parseList("5"));
        assertEquals(List.of(), HostCpuPin.parseList(""));
    }

    @Test
    void autoTakesTheAllowedCpusInTurn() {
        List<Integer> allowed = List.of(2, 5);
        Set<Integer> chosen = new HashSet<>();
        for (int i = 0; i < 4; i++) {
            Optional<Integer> cpu = HostCpuPin.choose("auto", allowed);
            assertTrue(cpu.isPresent() && allowed.contains(cpu.get()), cpu.toString());
            chosen.add(cpu.get());
        }
        assertEquals(Set.of(2, 5), chosen, "two guests in a row get both CPUs");
    }

    @Test
    void offAndANumberAreObeyed() {
        assertFalse(HostCpuPin.choose("off", List.of(0, 1)).isPresent());
        assertEquals(Optional.of(1), HostCpuPin.choose("1", List.of(0, 1)));
        assertFalse(HostCpuPin.choose("auto", List.of()).isPresent(), "nothing known, nothing pinned");
        assertThrows(IllegalArgumentException.class, () -> HostCpuPin.choose("fast", List.of(0)));
    }

    @Test
    void thisProcessMayRunSomewhere() {
        assertFalse(HostCpuPin.allowedCpus().isEmpty());
    }
}
