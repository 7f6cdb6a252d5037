package io.lvmqos.volume;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Maps CSI names (arbitrary strings of up to 128 bytes) to LV names deterministically: a readable
 * prefix for people running lvs, plus a digest so that distinct names never collide. The alphabet
 * avoids '-' because device-mapper doubles it and the dm name (vg-lv) is limited to 127 bytes.
 */
public final class LvmNames {

    private static final Pattern VALID = Pattern.compile("[A-Za-z0-9+_.][A-Za-z0-9+_.-]{0,62}");
    private static final int READABLE_LENGTH = 32;
    private static final int DIGEST_HEX_LENGTH = 24;
    /** The longest LV name this class makes: a snapshot's. */
    public static final int MAX_LV_NAME_LENGTH = "snap_".length() + READABLE_LENGTH + 1 + DIGEST_HEX_LENGTH;

    private LvmNames() {
    }

    public static String volumeLvName(String csiName) {
        return "vol_" + readable(csiName) + "_" + digest(csiName);
    }

    public static String snapshotLvName(String csiName) {
        return "snap_" + readable(csiName) + "_" + digest(csiName);
    }

    /** The token of a group snapshot, kept in its members' group tag: never an LV name of its own. */
    public static String groupToken(String csiName) {
        return "grp_" + readable(csiName) + "_" + digest(csiName);
    }

    public static boolean isVolumeLvName(String lvName) {
        return lvName.startsWith("vol_");
    }

    public static boolean isSnapshotLvName(String lvName) {
        return lvName.startsWith("snap_");
    }

    /** Volume group, pool and LV names we accept from configuration and StorageClasses. */
    public static boolean isValidName(String name) {
        return VALID.matcher(name).matches() && !name.equals(".") && !name.equals("..")
                && !name.startsWith("snapshot") && !name.startsWith("pvmove");
    }

    public static void requireValidName(String name) {
        if (!isValidName(name)) {
            throw new IllegalArgumentException("not a valid LVM name: " + name);
        }
    }

    private static String readable(String csiName) {
        String lower = csiName.toLowerCase(Locale.ROOT);
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < lower.length() && out.length() < READABLE_LENGTH; i++) {
            char c = lower.charAt(i);
            out.append((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ? c : '_');
        }
        return out.toString();
    }

    private static String digest(String csiName) {
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(csiName.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(hash).substring(0, DIGEST_HEX_LENGTH);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }
}
