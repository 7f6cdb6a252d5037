package io.lvmqos.group;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class GroupSnapshotIdTest {

    @Test
    void anIssuedIdParsesBackToItself() {
        GroupSnapshotId id = GroupSnapshotId.of("node-1", "lvmqos", "groupsnapshot-0a1b");
        assertTrue(id.toString().startsWith("lvmqos-group/node-1/lvmqos/grp_groupsnapshot_0a1b_"), id.toString());
        assertEquals(Optional.of(id), GroupSnapshotId.parse(id.toString()));
        assertTrue(id.isOn("node-1"));
        assertFalse(id.isOn("node-2"));
    }

    @Test
    void theSameNameGivesTheSameTokenAndAnotherNameAnother() {
        assertEquals(GroupSnapshotId.of("n", "vg", "a"), GroupSnapshotId.of("n", "vg", "a"));
        assertFalse(GroupSnapshotId.of("n", "vg", "a").equals(GroupSnapshotId.of("n", "vg", "A")),
                "names that read alike differ in the digest");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "fake", "lvmqos-group/n/vg", "lvmqos/n/vg/grp_x_0", "lvmqos-group/n/vg/vol_x_0",
            "lvmqos-group//vg/grp_x_0", "lvmqos-group/n/-vg/grp_x_0", "lvmqos-group/n/vg/grp_x_0/extra"})
    void anythingElseIsNoGroupOfOurs(String text) {
        assertEquals(Optional.empty(), GroupSnapshotId.parse(text));
    }
}
