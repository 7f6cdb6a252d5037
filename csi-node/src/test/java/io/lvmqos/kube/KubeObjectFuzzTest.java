package io.lvmqos.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.lvmqos.fuzz.FuzzReport;
import java.io.IOException;
import java.io.StringReader;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;

/**
 * Fuzzes the watcher's reading of what the API server sends ({@link JsonStream} through
 * {@link KubeObject#read}).
 *
 * <p>Property: for any text, reading an object returns one or throws {@link JsonStream.Malformed},
 * never another exception (no stack overflow on deep nesting, no index or number exception). A
 * PersistentVolume written with any strings in its fields (escaped as JSON escapes them, amid
 * members the reader skips) reads back to exactly those strings.
 */
class KubeObjectFuzzTest {

    private static final FuzzReport REPORT = new FuzzReport(KubeObjectFuzzTest.class);

    @FuzzTest
    void readsOrRefusesAnyTextAndReadsBackWhatWasWritten(FuzzedDataProvider data) throws IOException {
        REPORT.count();
        if (data.consumeBoolean()) {
            String name = data.consumeString(40);
            String driver = data.consumeString(20);
            String handle = data.consumeString(60);
            String className = data.consumeString(20);
            String skipped = data.consumeString(40);
            String json = "{\"metadata\":{\"x\":[" + quote(skipped) + ",{\"" + "y\":1e5}],\"name\":" + quote(name)
                    + ",\"resourceVersion\":\"7\"},\"spec\":{\"csi\":{\"driver\":" + quote(driver)
                    + ",\"volumeHandle\":" + quote(handle) + "},\"volumeAttributesClassName\":" + quote(className)
                    + "},\"status\":{\"phase\":" + quote(skipped) + "}}";
            assertEquals(new KubeObject(name, "7", driver, handle, className, "", Map.of(), 0, "", ""),
                    KubeObject.read(new JsonStream(new StringReader(json), "fuzz")));
            return;
        }
        try {
            KubeObject.read(new JsonStream(new StringReader(data.consumeRemainingAsString()), "fuzz"));
        } catch (JsonStream.Malformed refused) {
            // the one way to refuse
        }
    }

    private static String quote(String value) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : value.toCharArray()) {
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.append('"').toString();
    }

    @AfterAll
    static void report() {
        REPORT.write();
    }
}
