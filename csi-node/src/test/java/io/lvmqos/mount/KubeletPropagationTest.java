package io.lvmqos.mount;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.errors.DriverException;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The node plugin's kubelet directories judged from mountinfo lines as a container runtime leaves them. */
class KubeletPropagationTest {

    private static final Path KUBELET = Path.of("/var/lib/kubelet");
    private static final String ROOT = "600 500 0:50 / / rw,relatime - overlay overlay rw\n";

    private static KubeletPropagation judge(String mountinfo) {
        return KubeletPropagation.of(MountTable.parse(mountinfo), KUBELET);
    }

    /** The DaemonSet's two mounts, each a bind of the host's directory with the given optional fields. */
    private static String daemonSet(String podsFields, String pluginsFields) {
        return ROOT
                + "610 600 254:1 /var/lib/kubelet/pods /var/lib/kubelet/pods rw,relatime " + podsFields + " - ext4 /dev/vda1 rw\n"
                + "611 600 254:1 /var/lib/kubelet/plugins /var/lib/kubelet/plugins rw,relatime " + pluginsFields
                + " - ext4 /dev/vda1 rw\n";
    }

    @Test
    void bidirectionalMountsAreSharedAndPass() {
        KubeletPropagation propagation = judge(daemonSet("shared:7", "shared:7"));
        assertEquals(Optional.empty(), propagation.problem());
        propagation.requireShared();
    }

    @Test
    void aSharedMountThatIsAlsoASlaveStillPropagatesBack() {
        assertEquals(Optional.empty(), judge(daemonSet("shared:9 master:7", "shared:9 master:7")).problem());
    }

    @Test
    void hostToContainerIsASlaveOnlyAndIsRefusedNamingBidirectional() {
        String problem = judge(daemonSet("master:7", "master:7")).problem().orElseThrow();
        assertTrue(problem.startsWith("/var/lib/kubelet/pods is on the mount at /var/lib/kubelet/pods, which is not shared"),
                problem);
        assertTrue(problem.contains("only [master:7]"), problem);
        assertTrue(problem.contains("mountPropagation: Bidirectional"), problem);
    }

    @Test
    void noneHasNoOptionalFieldAndIsRefused() {
        assertTrue(judge(daemonSet("", "")).problem().orElseThrow().contains("no shared:N"));
    }

    @Test
    void theDirectoryWithoutPropagationIsTheOneNamed() {
        String problem = judge(daemonSet("shared:7", "master:7")).problem().orElseThrow();
        assertTrue(problem.startsWith("/var/lib/kubelet/plugins is on the mount at /var/lib/kubelet/plugins"), problem);
    }

    @Test
    void aDirectoryWithoutAMountOfItsOwnIsJudgedByTheMountHoldingIt() {
        String sharedParent = ROOT + "620 600 0:60 / /var/lib/kubelet rw shared:3 - tmpfs kubelet rw,size=65536k\n";
        assertEquals(Optional.empty(), judge(sharedParent).problem());
        assertTrue(judge(ROOT).problem().orElseThrow().startsWith("/var/lib/kubelet/pods is on the mount at /,"));
    }

    @Test
    void ofStackedMountsTheOneOnTopCounts() {
        String stacked = daemonSet("shared:7", "shared:7")
                + "630 610 0:61 / /var/lib/kubelet/pods rw - tmpfs over rw\n";
        assertTrue(judge(stacked).problem().isPresent(), "the private tmpfs on top hides the shared bind below");
    }

    @Test
    void aPublishIntoTheVoidIsAFailedPrecondition() {
        DriverException refused = assertThrows(DriverException.FailedPrecondition.class,
                () -> judge(daemonSet("master:7", "master:7")).requireShared());
        assertTrue(refused.getMessage().contains("mountPropagation: Bidirectional"), refused.getMessage());
    }

    @Test
    void pathsOfToolsAreNotChecked() {
        assertEquals(Optional.empty(), KubeletPropagation.unchecked().problem());
    }
}
