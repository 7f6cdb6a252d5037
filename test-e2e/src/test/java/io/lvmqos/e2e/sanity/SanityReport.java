package io.lvmqos.e2e.sanity;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What csi-sanity's verbose output (ginkgo {@code -v}) says of a run: its closing counts and, for
 * each spec it did not run, the spec and the reason it gave. Read from the output rather than a
 * JUnit report so that the same text a person reads is the one checked.
 *
 * @param passed specs that ran and passed
 * @param failed specs that ran and failed
 * @param pending specs csi-test itself marks pending (never run by any driver)
 * @param skipped specs skipped at run time, by a reason the suite printed
 * @param notRun every spec not run, with its reason, in the order printed
 */
public record SanityReport(int passed, int failed, int pending, int skipped, List<NotRun> notRun) {

    /** A spec csi-sanity did not run. */
    public record NotRun(String spec, String reason) {
    }

    private static final Pattern SUMMARY = Pattern.compile(
            "^(SUCCESS|FAIL)! -- (\\d+) Passed \\| (\\d+) Failed(?: \\| (\\d+) Pending)?(?: \\| (\\d+) Skipped)?");
    private static final Pattern SKIP_REASON = Pattern.compile("^\\s+\\[SKIPPED\\] (?!in \\[)(.+)$");

    /** The report of the output's lines; empty when it has no closing summary (the run died). */
    public static Optional<SanityReport> parse(List<String> lines) {
        List<NotRun> notRun = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.startsWith("P [PENDING]") && i + 1 < lines.size()) {
                notRun.add(new NotRun(lines.get(i + 1).strip(), "pending in csi-test"));
            } else if (line.startsWith("S [SKIPPED]") && i + 1 < lines.size()) {
                String spec = lines.get(i + 1).strip().replace(" [BeforeEach]", "");
                String reason = "no reason printed";
                for (int j = i + 2; j < lines.size() && !lines.get(j).startsWith("------"); j++) {
                    Matcher m = SKIP_REASON.matcher(lines.get(j));
                    if (m.matches()) {
                        reason = m.group(1).strip();
                        break;
                    }
                }
                notRun.add(new NotRun(spec, reason));
            }
        }
        for (int i = lines.size() - 1; i >= 0; i--) {
            Matcher m = SUMMARY.matcher(lines.get(i).strip());
            if (m.find()) {
                return Optional.of(new SanityReport(Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3)),
                        count(m.group(4)), count(m.group(5)), List.copyOf(notRun)));
            }
        }
        return Optional.empty();
    }

    private static int count(String group) {
        return group == null ? 0 : Integer.parseInt(group);
    }
}
