package io.lvmqos.volume;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The id of a volume or snapshot this driver issued: {@code <prefix>/<node>/<vg>/<lv>}. The node is
 * in the id because LVM volumes are local: a source on another node must be told apart from an
 * unknown one. Anything that does not parse was never issued by us and means "not found".
 *
 * <p>CSI ids are at most {@value #MAX_BYTES} bytes, and a node name may have 253 characters. When the
 * whole id would be longer, {@link #issue} puts a token in the node's place: {@code N} and 16
 * uppercase hex digits of the name's SHA-256. Node names are lowercase DNS subdomains, so a token is
 * never a node's name, and "is this id on my node?" still has an exact answer ({@link #isOn}). Ids of
 * either form, including longer ones issued before tokens existed, parse and keep working.
 */
public record VolumeId(Kind kind, String node, String volumeGroup, String lvName) {

    public enum Kind {
        VOLUME("lvmqos"), SNAPSHOT("lvmqos-snap");

        private final String prefix;

        Kind(String prefix) {
            this.prefix = prefix;
        }
    }

    /** The CSI spec's limit on the size of an id, in bytes. */
    public static final int MAX_BYTES = 128;
    /**
     * The longest volume group name whose ids stay within {@link #MAX_BYTES}: a snapshot's prefix,
     * a node token and the longest snapshot LV name, with their separators, leave this much.
     */
    public static final int MAX_VOLUME_GROUP_LENGTH = MAX_BYTES - Kind.SNAPSHOT.prefix.length() - 3
            - (1 + 16) - LvmNames.MAX_LV_NAME_LENGTH;

    private static final Pattern NODE_TOKEN = Pattern.compile("N[0-9A-F]{16}");

    public VolumeId {
        if (!(NodeIds.isValid(node) || NODE_TOKEN.matcher(node).matches()) || !LvmNames.isValidName(volumeGroup) || !LvmNames.isValidName(lvName)) {
            throw new IllegalArgumentException("not a valid volume id: " + node + "/" + volumeGroup + "/" + lvName);
        }
        if (kind == Kind.VOLUME != LvmNames.isVolumeLvName(lvName) || kind == Kind.SNAPSHOT != LvmNames.isSnapshotLvName(lvName)) {
            throw new IllegalArgumentException("LV name " + lvName + " does not name a " + kind);
        }
    }

    /**
     * The id this driver hands out for an LV on {@code node}: the node's name where the id fits in
     * {@value #MAX_BYTES} bytes, its token where it would not. {@code node} must be a node's name: a
     * token in its place would make an id that is also on the node it is the token of (found by
     * VolumeIdFuzzTest; Main refuses such a --node-id at start-up already).
     */
    public static VolumeId issue(Kind kind, String node, String volumeGroup, String lvName) {
        if (!NodeIds.isValid(node)) {
            throw new IllegalArgumentException("not a node name: " + node);
        }
        VolumeId named = new VolumeId(kind, node, volumeGroup, lvName);
        if (named.toString().getBytes(StandardCharsets.UTF_8).length <= MAX_BYTES) {
            return named;
        }
        return new VolumeId(kind, tokenOf(node), volumeGroup, lvName);
    }

    /** Refuses a volume group whose ids could outgrow {@value #MAX_BYTES} bytes, saying why. */
    public static void requireFitsInIds(String volumeGroup) {
        if (volumeGroup.length() > MAX_VOLUME_GROUP_LENGTH) {
            throw new IllegalArgumentException("volume group name " + volumeGroup + " has " + volumeGroup.length()
                    + " characters; at most " + MAX_VOLUME_GROUP_LENGTH + " keep every volume and snapshot id within"
                    + " the " + MAX_BYTES + " bytes that CSI allows");
        }
    }

    /** Whether this id names an LV on the node called {@code nodeName}, whichever form it has. */
    public boolean isOn(String nodeName) {
        return node.equals(nodeName) || node.equals(tokenOf(nodeName));
    }

    /** The same LV, whether either id names the node or carries its token. */
    public boolean sameVolume(VolumeId other) {
        return kind == other.kind && volumeGroup.equals(other.volumeGroup) && lvName.equals(other.lvName)
                && nodeToken().equals(other.nodeToken());
    }

    /** The node for a message: its name, or what the token says of it. */
    public String nodeDescription() {
        return isToken(node) ? "the node whose name hashes to " + node : node;
    }

    private String nodeToken() {
        return isToken(node) ? node : tokenOf(node);
    }

    private static boolean isToken(String node) {
        return NODE_TOKEN.matcher(node).matches();
    }

    static String tokenOf(String nodeName) {
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(nodeName.getBytes(StandardCharsets.UTF_8));
            return "N" + HexFormat.of().withUpperCase().formatHex(hash, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    public static Optional<VolumeId> parse(Kind kind, String text) {
        String[] parts = text.split("/", -1);
        if (parts.length != 4 || !parts[0].equals(kind.prefix)) {
            return Optional.empty();
        }
        try {
            return Optional.of(new VolumeId(kind, parts[1], parts[2], parts[3]));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    /** The LVM name of the LV, {@code vg/lv}. */
    public String lvmPath() {
        return volumeGroup + "/" + lvName;
    }

    @Override
    public String toString() {
        return kind.prefix + "/" + node + "/" + volumeGroup + "/" + lvName;
    }
}
