package io.lvmqos.lvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The JSON reader of lvm's reports: the captured output of lvm 2.03.16, and the ways text can be malformed. */
class ReportJsonTest {

    @Test
    void readsCapturedLvsOutputIntoRowsOfStrings() {
        Map<?, ?> root = (Map<?, ?>) ReportJson.parse(LvmReportTest.fixture("/lvm/lvs-thin-and-linear.json"));
        List<?> rows = (List<?>) ((Map<?, ?>) ((List<?>) root.get("report")).getFirst()).get("lv");
        Map<?, ?> first = (Map<?, ?>) rows.getFirst();
        assertEquals("[lvol0_pmspare]", first.get("lv_name"));
        assertEquals("4194304", first.get("lv_size"));
        assertEquals("", first.get("lv_tags"));
        assertEquals(List.of("lv_name", "vg_name", "lv_size"), first.keySet().stream().limit(3).toList(),
                "members keep the document's order");
    }

    @Test
    void readsTheCommandLogLvmAddsWhenReportCommandLogIsOn() {
        String json = """
                {
                      "report": [ { "vg": [ {"vg_name":"vg0", "vg_size":"1073741824"} ] } ]
                      ,
                      "log": [
                          {"log_seq_num":"1", "log_type":"status", "log_context":"shell", "log_object_type":"cmd", "log_ret_code":"1"}
                      ]
                  }
                """;
        Map<?, ?> root = (Map<?, ?>) ReportJson.parse(json);
        assertEquals(List.of("report", "log"), List.copyOf(root.keySet()));
    }

    @Test
    void numbersKeepTheirLiteralText() {
        assertEquals(List.of("0", "-12", "3.50", "1e+3", "2E-2"), ReportJson.parse("[0, -12, 3.50, 1e+3, 2E-2]"));
    }

    @Test
    void literalsAreBooleansAndNull() {
        List<?> values = (List<?>) ReportJson.parse("[true,false,null]");
        assertEquals(Boolean.TRUE, values.get(0));
        assertEquals(Boolean.FALSE, values.get(1));
        assertSame(ReportJson.NULL, values.get(2));
    }

    @Test
    void escapesAreDecoded() {
        assertEquals("a\"b\\c/d\te\nf\u00e9\u20ac", ReportJson.parse("\"a\\\"b\\\\c\\/d\\te\\nf\\u00e9\\u20AC\""));
    }

    @Test
    void emptyContainersAndBlanks() {
        assertEquals(Map.of("lv", List.of()), ReportJson.parse(" \r\n\t{ \"lv\" : [ ] } \n"));
    }

    @ParameterizedTest(name = "refuses {0}")
    @ValueSource(strings = {
        "", "   ", "  WARNING: not json", "{", "{\"a\":\"b\"", "{\"a\" \"b\"}", "{a:1}", "{\"a\":1,}", "[1,]", "[1 2]",
        "{\"a\":1}x", "{\"a\":1} {}", "\"unclosed", "\"bad \\x escape\"", "\"\\u12\"", "\"\\u12G4\"",
        "\"tab\there\"", "01", "-", "1.", "1e", "+1", "tru", "nul", "{\"a\":1,\"a\":2}", "[.5]"
    })
    void malformedTextIsRefused(String text) {
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> ReportJson.parse(text));
        assertTrue(refused.getMessage().contains("at offset"), refused.getMessage());
    }

    @Test
    void nestingBeyondAnyReportIsRefused() {
        String deep = "[".repeat(100) + "]".repeat(100);
        assertThrows(IllegalArgumentException.class, () -> ReportJson.parse(deep));
        String shallow = "[".repeat(60) + "]".repeat(60);
        assertTrue(ReportJson.parse(shallow) instanceof List<?>);
    }

    @Test
    void aRowFieldThatIsNotAValueIsInternal() {
        String json = "{\"report\":[{\"lv\":[{\"lv_name\":{\"nested\":\"x\"}}]}]}";
        assertThrows(io.lvmqos.errors.DriverException.Internal.class, () -> LvmReport.logicalVolumes(json));
    }

    @Test
    void aReportWithoutItsReportListIsInternal() {
        assertThrows(io.lvmqos.errors.DriverException.Internal.class, () -> LvmReport.logicalVolumes("{\"lv\":[]}"));
        assertThrows(io.lvmqos.errors.DriverException.Internal.class, () -> LvmReport.volumeGroups("[]"));
    }
}
