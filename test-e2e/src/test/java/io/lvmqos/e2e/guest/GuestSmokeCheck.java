package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Runs inside the UML guest (see UmlGuestIT): proves with real commands that the guest has what the
 * driver needs. An example of a guest-side check: named *Check so the host's surefire and failsafe
 * leave it alone, public so a host test can name it, and told about the guest through {@link GuestEnv}.
 */
public class GuestSmokeCheck {
    private static final String LINEAR = "smoke-linear";
    private static final String THIN = "smoke-thin";

    @BeforeAll
    static void onlyInTheGuest() {
        GuestEnv.assumeInGuest();
    }

    @AfterEach
    void removeTheVolumesThisTestCreated() {
        for (String lv : List.of(THIN, LINEAR)) {
            String path = GuestEnv.volumeGroup() + "/" + lv;
            if (GuestCommand.run("lvm", "lvs", path).succeeded()) {
                ok("lvm", "lvremove", "-q", "-y", path);
            }
        }
    }

    @Test
    void volumeGroupExists() {
        List<String> names = ok("lvm", "vgs", "--noheadings", "-o", "vg_name").lines().map(String::strip).toList();
        assertTrue(names.contains(GuestEnv.volumeGroup()), "vgs lists " + names);
    }

    @Test
    void linearVolumeIsActiveWithADeviceNumber() throws IOException {
        String vg = GuestEnv.volumeGroup();
        ok("lvm", "lvcreate", "-q", "-y", "-L", "64m", "-n", LINEAR, vg);

        String attr = ok("lvm", "lvs", "--noheadings", "-o", "lv_attr", vg + "/" + LINEAR).strip();
        assertEquals('a', attr.charAt(4), "lv_attr " + attr + " says not active");
        List<String> kernel = words(ok("lvm", "lvs", "--noheadings", "-o", "lv_kernel_major,lv_kernel_minor",
                vg + "/" + LINEAR));
        // stat prints the device node's major:minor in hex
        String[] node = ok("stat", "-L", "-c", "%t:%T", "/dev/" + vg + "/" + LINEAR).strip().split(":");
        String deviceNumber = Integer.parseInt(node[0], 16) + ":" + Integer.parseInt(node[1], 16);
        assertEquals(kernel.get(0) + ":" + kernel.get(1), deviceNumber, "device node versus lvs");
        Path sysfs = Path.of("/sys/dev/block", deviceNumber, "dm", "name");
        assertEquals(vg + "-smoke--linear", Files.readString(sysfs).strip(), sysfs.toString());
    }

    @Test
    void thinVolumeCanBeCreatedInThePool() {
        String vg = GuestEnv.volumeGroup();
        String pool = GuestEnv.thinPool().orElseThrow(() -> new AssertionError("the guest has no thin pool"));
        ok("lvm", "lvcreate", "-q", "-y", "-V", "256m", "-T", vg + "/" + pool, "-n", THIN);

        List<String> fields = words(ok("lvm", "lvs", "--noheadings", "-o", "segtype,pool_lv,lv_attr", vg + "/" + THIN));
        assertEquals(List.of("thin", pool), fields.subList(0, 2));
        assertEquals('a', fields.get(2).charAt(4), "lv_attr " + fields.get(2) + " says not active");
        assertTrue(Files.exists(Path.of("/dev", vg, THIN)), "no device node for the thin volume");
    }

    @Test
    void ioControllerIsAvailableInTheCgroupV2Root() throws IOException {
        assertEquals(CgroupMode.V2, GuestEnv.cgroupMode());
        Path root = GuestEnv.cgroupRoot();
        assertTrue(words(Files.readString(root.resolve("cgroup.controllers"))).contains("io"), "io controller");
        assertTrue(words(Files.readString(root.resolve("cgroup.subtree_control"))).contains("io"),
                "io enabled for child cgroups");
    }

    private static List<String> words(String text) {
        return Arrays.stream(text.strip().split("\\s+")).toList();
    }
}
