package io.lvmqos.e2e.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class MountinfoTest {

    private static final String MOUNTINFO = """
            22 1 98:0 / / ro,relatime - hostfs none ro
            41 22 0:33 / /run/kubelet rw,relatime shared:1 - tmpfs kubelet rw,size=65536k
            53 41 254:0 / /run/kubelet/pods/u1/volumes/kubernetes.io~csi/pv/mount rw,relatime master:2 - ext4 /dev/mapper/x rw
            54 41 254:1 / /run/kubelet/a\\040b rw,relatime - ext4 /dev/mapper/y rw
            55 22 0:34 / /run/kubeletx rw - tmpfs t rw
            """;

    @Test
    void mountsBelowADirectoryAreThoseStrictlyInsideIt() {
        assertEquals(List.of("/run/kubelet/pods/u1/volumes/kubernetes.io~csi/pv/mount", "/run/kubelet/a b"),
                Mountinfo.mountsBelow(MOUNTINFO, Path.of("/run/kubelet")));
    }

    @Test
    void theKernelsOctalEscapesAreUndone() {
        assertEquals("/run/kubelet/a b", Mountinfo.mountPoint(MOUNTINFO.lines().toList().get(3)));
    }
}
