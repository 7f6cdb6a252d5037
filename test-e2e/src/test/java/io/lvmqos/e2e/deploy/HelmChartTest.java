package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.marcnuri.helm.LintResult;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The chart through real Helm: lint, template with defaults. */
class HelmChartTest {

    @Test
    void helmLintIsClean() {
        LintResult lint = HelmChart.lint();
        assertFalse(lint.isFailed(), String.join("\n", lint.getMessages()));
        System.out.println("helm lint: " + lint.getMessages());
    }

    @Test
    void rendersWithDefaults(@TempDir Path dir) {
        List<YamlNode> objects = HelmChart.template();
        objects.forEach(o -> System.out.println(o.kind() + "/" + o.name()));
    }
}
