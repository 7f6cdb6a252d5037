package io.lvmqos.cgroup;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.errors.DriverException;
import java.util.Arrays;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
            Matcher shape = Pattern.compile(Pattern.quote(file) + " line is not understood: '(.*)': (.+)", Pattern.DOTALL)
                    .matcher(refused.getMessage());
            assertTrue(shape.matches(), refused::getMessage);
            assertTrue(Arrays.asList(text.split("\n")).contains(shape.group(1)),
                    () -> "'" + shape.group(1) + "' is not a line of '" + text + "'");
            assertInstanceOf(IllegalArgumentException.class, refused.getCause(), refused::getMessage);
        }
    }
}
