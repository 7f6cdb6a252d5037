package io.lvmqos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.guarantee.IoCostEnabler;
import io.lvmqos.volume.DiskCapacity;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** --io-cost, --io-cost-model, --io-cost-qos and --io-capacity as the plugin reads them at start. */
class IoCostSettingsTest {

    static DriverSettings settings(String... extra) {
        List<String> args = new ArrayList<>(List.of("--node-id", "n1", "--volume-group", "fast",
                "--volume-group", "slow"));
        args.addAll(List.of(extra));
        return Main.settings(args.toArray(String[]::new));
    }

    @Test
    void offUnlessAsked() {
        assertEquals(IoCostSettings.NONE, settings().ioCost());
    }

    @Test
    void aGroupWithItsModelQosAndCapacity() {
        IoCostSettings ioCost = settings("--io-cost", "fast",
                "--io-cost-model", "fast:ctrl=user model=linear rrandiops=380 wrandiops=380",
                "--io-cost-qos", "fast:ctrl=user min=50 max=150",
                "--io-capacity", "fast:iops=400,bps=200Mi").ioCost();
        assertEquals(List.of("fast"), ioCost.groups());
        assertEquals(Optional.of("ctrl=user model=linear rrandiops=380 wrandiops=380"), ioCost.modelFor("fast"));
        assertEquals("ctrl=user min=50 max=150", ioCost.qosFor("fast"));
        assertEquals(DiskCapacity.symmetric(OptionalLong.of(400), OptionalLong.of(200L << 20)), ioCost.capacities().get("fast"));
    }

    @Test
    void eachGroupIsAskedOfTheEnablerInTheOrderGiven() {
        IoCostSettings ioCost = settings("--io-cost", "slow", "--io-cost", "fast",
                "--io-cost-model", "fast:ctrl=user model=linear rrandiops=380 wrandiops=380",
                "--io-capacity", "fast:iops=400").ioCost();
        assertEquals(List.of(
                new IoCostEnabler.Asked("slow", Optional.empty(), IoCostSettings.DEFAULT_QOS, Optional.empty()),
                new IoCostEnabler.Asked("fast", Optional.of("ctrl=user model=linear rrandiops=380 wrandiops=380"),
                        IoCostSettings.DEFAULT_QOS, Optional.of(DiskCapacity.symmetric(OptionalLong.of(400),
                                OptionalLong.empty())))), ioCost.asked());
    }

    @Test
    void theDefaultQosPinsTheVrate() {
        assertTrue(settings("--io-cost", "fast").ioCost().qosFor("fast").contains("min=95 max=95"));
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "--io-cost=other",
        "--io-cost-model=fast:ctrl=user",
        "--io-cost-qos=fast:min=50",
        "--io-capacity=other:iops=400",
        "--io-capacity=fast:iops=0",
        "--io-capacity=fast:iops=1.5",
        "--io-capacity=fast:speed=4",
        "--io-capacity=fast",
    })
    void aSettingThatCannotBeKeptIsAUsageError(String option) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> settings("--io-cost", "slow", option));
        assertTrue(e.getMessage().startsWith(option.substring(0, option.indexOf('='))), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"fast:rrandiops=abc", "fast:rlat=25000", "fast:model=quadratic", "fast:"})
    void modelKeysAndValuesAreChecked(String model) {
        assertThrows(IllegalArgumentException.class, () -> settings("--io-cost", "fast", "--io-cost-model", model));
    }

    @Test
    void enableIsTheDriversToSet() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> settings("--io-cost", "fast", "--io-cost-qos", "fast:enable=0"));
        assertTrue(e.getMessage().contains("enable"), e.getMessage());
    }
}
