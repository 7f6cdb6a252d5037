package io.lvmqos.e2e.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.e2e.demo.QosTable.Limit;
import io.lvmqos.e2e.demo.QosTable.Row;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class QosTableTest {

    private static final double MIB = 1 << 20;

    private static Row bandwidth(String pvc, FioJob job, double limitMib, double measuredMib) {
        return new Row(pvc, "sc", pvc.equals("data-bps") ? "containerd+runc" : "imitation", job, limitMib > 0 ? Optional.of(new Limit("wbps", limitMib * MIB)) : Optional.empty(),
                measuredMib, measuredMib * MIB);
    }

    @ParameterizedTest
    @CsvSource({"8.0, true", "7.21, true", "8.79, true", "7.1, false", "8.9, false", "0.5, false"})
    void aLimitedFigureMustBeWithinTenPercentOfItsLimit(double measured, boolean passes) {
        QosTable table = new QosTable();
        table.add(bandwidth("limited", FioJob.SEQ_WRITE, 8, measured));
        assertEquals(passes, table.failures().isEmpty(), table.failures().toString());
    }

    @Test
    void iopsLimitsAreJudgedByIopsNotBandwidth() {
        QosTable table = new QosTable();
        table.add(new Row("iops", "sc", "imitation", FioJob.RAND_READ, Optional.of(new Limit("riops", 300)), 297, 297 * 4096));
        assertEquals(List.of(), table.failures());
        assertEquals("0.99", table.verdict(table.rows().getFirst()).ratio());
    }

    @ParameterizedTest
    @CsvSource({"40.0, true", "39.0, false"})
    void theUnlimitedVolumeMustBeFiveTimesTheLimitedOneWithTheSameJob(double unlimited, boolean passes) {
        QosTable table = new QosTable();
        table.add(bandwidth("limited", FioJob.SEQ_WRITE, 8, 8));
        table.add(bandwidth("other-job", FioJob.SEQ_READ, 8, 1)); // another job: not the reference
        table.add(bandwidth("free", FioJob.SEQ_WRITE, 0, unlimited));
        List<String> failures = table.failures().stream().filter(f -> f.startsWith("free")).toList();
        assertEquals(passes, failures.isEmpty(), failures.toString());
        assertTrue(table.verdict(table.rows().get(2)).ratio().endsWith("x limited"));
    }

    @Test
    void theTableHasAHeaderAndOneAlignedLinePerRun() {
        QosTable table = new QosTable();
        table.add(bandwidth("data-bps", FioJob.SEQ_WRITE, 8, 8.01));
        table.add(bandwidth("data-free", FioJob.SEQ_WRITE, 0, 1234.5));
        List<String> lines = table.render();
        assertEquals(3, lines.size());
        assertTrue(lines.get(0).startsWith("PVC "), lines.get(0));
        assertTrue(lines.get(1).contains("wbps 8 MiB/s") && lines.get(1).endsWith("1.00  ok"), lines.get(1));
        assertTrue(lines.get(2).contains("none") && lines.get(2).endsWith("154.1x data-bps  ok"), lines.get(2));
        assertEquals(lines.get(1).indexOf("seq write"), lines.get(2).indexOf("seq write"), "columns line up");
        assertTrue(lines.get(0).contains("pod run by"), lines.get(0));
        assertEquals(lines.get(0).indexOf("pod run by"), lines.get(1).indexOf("containerd+runc"), "the runtime's column");
        assertEquals(lines.get(0).indexOf("pod run by"), lines.get(2).indexOf("imitation"), "the runtime's column");
    }
}
