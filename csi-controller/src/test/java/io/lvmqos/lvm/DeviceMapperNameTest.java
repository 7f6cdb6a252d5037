package io.lvmqos.lvm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class DeviceMapperNameTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "lvmqos-vol_data_0123456789abcdef01234567, lvmqos, vol_data_0123456789abcdef01234567",
            "fast--ssd-vol_a_1, fast-ssd, vol_a_1",
            "a--b--c-d--e, a-b-c, d-e",
            "vg-thinpool, vg, thinpool",
    })
    void splitsTheVolumeGroupFromTheLvUndoingTheDoubledDashes(String dmName, String vg, String lv) {
        assertEquals(Optional.of(new DeviceMapperName(vg, lv)), DeviceMapperName.parse(dmName));
        assertEquals(dmName, new DeviceMapperName(vg, lv).name(), "the name made by the same rule");
    }

    @ParameterizedTest(name = "{0}/{1}")
    @CsvSource({
            "lvmqos, thinpool, lvmqos-thinpool-tpool",
            "my-vg, my-pool, my--vg-my--pool-tpool",
    })
    void aPoolsKernelTargetIsItsTpoolLayer(String vg, String pool, String target) {
        assertEquals(target, new DeviceMapperName(vg, pool).layer("tpool"));
    }

    @ParameterizedTest(name = "''{0}''")
    @ValueSource(strings = {"vg-thinpool-tpool", "vg-thinpool_tdata-real", "nodash", "-lv", "vg-", "vg--lv", "",
            "crypt0"})
    void namesLvmDidNotGiveAnLvAreNotVolumes(String dmName) {
        assertEquals(Optional.empty(), DeviceMapperName.parse(dmName));
    }
}
