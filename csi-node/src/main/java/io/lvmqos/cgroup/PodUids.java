package io.lvmqos.cgroup;

import io.lvmqos.errors.DriverException;
import io.lvmqos.errors.Echo;
import java.util.regex.Pattern;

/**
 * What a pod UID is, for every part of the driver that reads one: publish and unpublish must
 * agree, or a pod limited at publish is never lifted. API pods have UUIDs; static and mirror pods
 * have 32 lowercase hex digits (an MD5 of the manifest). A UID becomes part of a cgroup path, so
 * nothing but lowercase hex digits and dashes is accepted.
 */
public final class PodUids {

    private static final Pattern POD_UID = Pattern.compile("[0-9a-f][0-9a-f-]{0,62}[0-9a-f]");

    private PodUids() {
    }

    public static boolean isValid(String candidate) {
        return candidate != null && POD_UID.matcher(candidate).matches();
    }

    /** @throws DriverException.InvalidArgument when the UID is not one */
    public static void require(String podUid) {
        if (!isValid(podUid)) {
            throw DriverException.invalidArgument("pod UID '" + Echo.of(String.valueOf(podUid))
                    + "' is not valid: expected 2 to 64 lowercase hex digits and dashes, e.g. a UUID");
        }
    }
}
