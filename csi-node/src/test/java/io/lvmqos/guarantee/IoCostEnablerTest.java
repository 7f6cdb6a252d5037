package io.lvmqos.guarantee;

import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.cgroup.CgroupMode;
import io.lvmqos.cgroup.IoCost;
import io.lvmqos.device.BackingDisks;
import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.CommandRunner;
import io.lvmqos.lvm.Lvm;
import io.lvmqos.volume.Guarantee;
import io.lvmqos.volume.GuaranteePolicy;
import io.lvmqos.volume.IoCostWeight;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node-wide refusals of {@link IoCostEnabler}, which decide before any disk is touched; turning
 * io.cost on for a disk is checked against a real kernel (GuaranteeIT).
 */
class IoCostEnablerTest {

    private static final Guarantee WEIGHT = new Guarantee(Optional.of(new IoCostWeight(800)), OptionalLong.empty(),
            OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty());
    private static final List<IoCostEnabler.Asked> FAST =
            List.of(new IoCostEnabler.Asked("fast", Optional.empty(), "ctrl=user", Optional.empty()));

    @TempDir
    Path cgroupRoot;

    private IoCostEnabler enabler() {
        IoCost ioCost = new IoCost(cgroupRoot);
        // no lvm is run on these paths: the program need not exist
        return new IoCostEnabler(ioCost, new IoCostModels(new Lvm(new CommandRunner(), cgroupRoot.resolve("no-lvm")),
                new BackingDisks(cgroupRoot.resolve("sys")), ioCost, cgroupRoot.resolve("sys")));
    }

    /** What a publish of a volume with a weight on group fast is told. */
    private static String refusal(GuaranteePolicy policy) {
        assertTrue(policy.ioCostGroups().isEmpty());
        return assertThrows(DriverException.FailedPrecondition.class, () -> policy.requireSupported("fast", WEIGHT))
                .getMessage();
    }

    @Test
    void nothingAskedIsNoIoCostAnywhere() {
        assertSame(GuaranteePolicy.NONE, enabler().enable(List.of(), () -> {
            throw new AssertionError("the cgroup mode is asked for though no group is");
        }, cgroupRoot));
    }

    @Test
    void cgroupV1RefusesEveryGuaranteeNamingWhy() {
        String refusal = refusal(enabler().enable(FAST, () -> CgroupMode.V1, cgroupRoot));
        assertTrue(refusal.contains("this node runs cgroup v1, which has no io.cost"), refusal);
    }

    @Test
    void aKernelWithoutIoCostRefusesEveryGuaranteeNamingTheFile() {
        String refusal = refusal(enabler().enable(FAST, () -> CgroupMode.V2, cgroupRoot));
        assertTrue(refusal.contains(cgroupRoot.resolve("io.cost.qos") + " does not exist"), refusal);
    }
}
