package io.lvmqos.e2e.guest;

import io.lvmqos.e2e.deploy.DashboardQueries;
import io.lvmqos.e2e.deploy.DashboardQueries.Query;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Whether a live scrape serves what some of the dashboard's queries use: each metric they name,
 * and each label they group or match on among that metric's samples. Two checks share it, because
 * no one guest serves every panel: DashboardCheck (the UML node, a volume under I/O) and
 * GuaranteeCheck (the qemu node, the only one whose kernel runs io.cost, so the only one with floors).
 */
final class DashboardCoverage {

    private DashboardCoverage() {
    }

    /** What the queries use and the scrape does not serve, one line each with the query's place. */
    static List<String> unserved(List<Query> queries, MetricsScrape scrape) {
        List<String> missing = new ArrayList<>();
        for (Query query : queries) {
            Set<String> labelsServed = new TreeSet<>();
            for (String metric : query.metrics()) {
                List<MetricsScrape.Sample> samples = scrape.samples().stream().filter(s -> s.name().equals(metric)).toList();
                if (samples.isEmpty()) {
                    missing.add(query.where() + ": metric " + metric);
                }
                samples.forEach(s -> labelsServed.addAll(s.labels().keySet()));
            }
            for (String label : query.labels()) {
                if (!labelsServed.contains(label) && !DashboardQueries.TARGET_LABELS.contains(label)) {
                    missing.add(query.where() + ": label " + label + " (served: " + labelsServed + ")");
                }
            }
        }
        return missing;
    }
}
