package io.lvmqos.cgroup;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.errors.DriverException;
import java.util.Arrays;

/**
 * The fuzz targets' oracle for a refused cgroup file: exactly {@link CgroupFiles#notUnderstood}'s
 * refusal, "FILE line is not understood: 'LINE': WHY", where LINE is a line of the text read and
 * the cause is the field's IllegalArgumentException. Anything else thrown (a bare
 * NumberFormatException, an index out of bounds) is a finding.
 */
final class NotUnderstood {

    private NotUnderstood() {
    }

    interface Read {
        void run();
    }

    /** Runs the read; a refusal must be the documented one for {@code file} and {@code text}. */
    static void readOrRefuse(String file, String text, Read read) {
        try {
            read.run();
        } catch (DriverException.Internal refused) {
            Throwable why = assertInstanceOf(IllegalArgumentException.class, refused.getCause(), refused::getMessage);
            assertTrue(Arrays.stream(text.split("\n")).anyMatch(line -> refused.getMessage().equals(
                    file + " line is not understood: '" + line + "': " + why.getMessage())),
                    () -> "not the refusal of a line of '" + text + "': " + refused.getMessage());
        }
    }
}
