package io.lvmqos.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.lvmqos.fuzz.FuzzReport;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;

/**
 * Fuzzes {@link VolumeId#parse}, which reads the ids that every controller and node call carries.
 *
 * <p>Property: for any text and either kind, {@code parse} returns an id or empty, never throws;
 * an id it returns prints back as exactly that text, so an id has one spelling. An id {@link
 * VolumeId#issue issued} for any valid node name (up to 253 characters), volume group within
 * {@link VolumeId#MAX_VOLUME_GROUP_LENGTH} and LV name that {@link LvmNames} makes for any CSI name
 * fits in {@value VolumeId#MAX_BYTES} bytes, parses back to itself, is on its node and on no other.
 * Invalid parts are refused by {@code issue} with IllegalArgumentException itself (no subclass) and
 * only its two messages: "not a node name: NODE" and "not a valid volume id: NODE/GROUP/LV".
 */
class VolumeIdFuzzTest {

    private static final FuzzReport REPORT = new FuzzReport(VolumeIdFuzzTest.class);
    private static final String[] PREFIXES = {"lvmqos/", "lvmqos-snap/", "", "lvmqos//", "LVMQOS/", "lvmqos-snap"};

    @FuzzTest
    void readsOrRefusesEveryText(FuzzedDataProvider data) {
        REPORT.count();
        VolumeId.Kind kind = data.pickValue(VolumeId.Kind.values());
        switch (data.consumeInt(0, 2)) {
            case 0 -> parsesBackToItsText(kind, data.consumeRemainingAsString());
            case 1 -> parsesBackToItsText(kind, data.pickValue(PREFIXES) + part(data) + "/" + part(data) + "/"
                    + part(data) + (data.consumeBoolean() ? "" : "/" + part(data)));
            default -> issuedIdsRoundTrip(data, kind);
        }
    }

    @AfterAll
    static void report() {
        REPORT.write();
    }

    private static void parsesBackToItsText(VolumeId.Kind kind, String text) {
        Optional<VolumeId> id = VolumeId.parse(kind, text);
        id.ifPresent(parsed -> {
            assertEquals(text, parsed.toString());
            assertEquals(kind, parsed.kind());
        });
    }

    private static void issuedIdsRoundTrip(FuzzedDataProvider data, VolumeId.Kind kind) {
        String node = nodeName(data);
        String group = data.consumeBoolean() ? lvmName(data, VolumeId.MAX_VOLUME_GROUP_LENGTH) : data.consumeString(70);
        String csiName = data.consumeString(128);
        String lv = kind == VolumeId.Kind.VOLUME ? LvmNames.volumeLvName(csiName) : LvmNames.snapshotLvName(csiName);
        VolumeId id;
        try {
            id = VolumeId.issue(kind, node, group, lv);
        } catch (IllegalArgumentException e) {
            // exactly issue's refusal of a node, or the record's of a group: no other exception, no other words
            assertEquals(IllegalArgumentException.class, e.getClass(), e::toString);
            assertEquals(NodeIds.isValid(node) ? "not a valid volume id: " + node + "/" + group + "/" + lv
                    : "not a node name: " + node, e.getMessage());
            assertTrue(!NodeIds.isValid(node) || !LvmNames.isValidName(group), () -> "refused " + node + "/" + group
                    + "/" + lv + ": " + e.getMessage());
            return;
        }
        int bytes = id.toString().getBytes(StandardCharsets.UTF_8).length;
        if (group.length() <= VolumeId.MAX_VOLUME_GROUP_LENGTH) {
            assertTrue(bytes <= VolumeId.MAX_BYTES, () -> id + " has " + bytes + " bytes");
        }
        assertEquals(Optional.of(id), VolumeId.parse(kind, id.toString()));
        assertTrue(id.isOn(node), () -> id + " is not on " + node);
        String other = node.equals("a") ? "b" : "a";
        assertTrue(!id.isOn(other), () -> id + " is on " + other + " too");
        assertTrue(id.sameVolume(new VolumeId(kind, node, group, lv)));
    }

    /** A DNS subdomain most of the time (lowercase, digits, '-' and '.'), up to 253 characters. */
    private static String nodeName(FuzzedDataProvider data) {
        if (data.consumeInt(0, 7) == 0) {
            return data.consumeString(260);
        }
        int length = data.consumeBoolean() ? data.consumeInt(1, 253) : data.consumeInt(1, 20);
        StringBuilder name = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            boolean edge = i == 0 || i == length - 1;
            name.append(data.pickValue(edge ? new char[] {'a', 'z', '0', '9', 'q'} : new char[] {'a', '0', '-', '.', 'k'}));
        }
        return name.toString();
    }

    private static String lvmName(FuzzedDataProvider data, int maxLength) {
        int length = data.consumeInt(1, maxLength);
        StringBuilder name = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            name.append(data.pickValue(new char[] {'a', 'Z', '0', '+', '_', '.', '-'}));
        }
        return name.toString();
    }

    private static String part(FuzzedDataProvider data) {
        return switch (data.consumeInt(0, 5)) {
            case 0 -> "vol_" + data.consumeAsciiString(60);
            case 1 -> "snap_" + data.consumeAsciiString(60);
            case 2 -> "N" + data.consumeAsciiString(16);
            case 3 -> data.pickValue(new String[] {"node-1", "vg0", "..", ".", "", "snapshot", "pvmove0", "N0123456789ABCDEF"});
            default -> data.consumeString(40);
        };
    }
}
