package io.lvmqos.e2e.deploy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The PromQL of the Grafana dashboard the chart ships (deploy/helm/lvmqos/dashboards/lvmqos.json):
 * each query with the metric names and label names it uses, read from the expression itself so
 * that they can be checked against what the driver really exports. The reading covers the PromQL
 * the dashboard uses (selectors with matchers, aggregations with by/on, functions, comparisons);
 * a function or keyword it does not know fails the reading rather than passing unchecked.
 */
public final class DashboardQueries {

    /** PromQL functions and aggregations the dashboard may use, and Grafana's label_values. */
    static final Set<String> FUNCTIONS = Set.of("sum", "max", "min", "avg", "count", "rate", "increase",
            "histogram_quantile", "label_values", "clamp_min");
    private static final Set<String> KEYWORDS = Set.of("and", "or", "unless", "bool");
    /** Labels Prometheus attaches to every series of a target, not the exporter. */
    public static final Set<String> TARGET_LABELS = Set.of("instance", "job");

    /**
     * The families the driver serves only for a volume group running io.cost (--io-cost): the
     * floors promised and the capacity they are admitted against, whether the model is trusted,
     * and the floors not kept. A query naming them is checked against a guest whose kernel has io.cost.
     */
    public static final Set<String> IO_COST_METRICS = Set.of("lvmqos_floor_promised_iops",
            "lvmqos_floor_promised_bytes_per_second", "lvmqos_floor_capacity_iops",
            "lvmqos_floor_capacity_bytes_per_second", "lvmqos_io_cost_model_trusted", "lvmqos_floors_unmet");

    private static final Pattern STRING = Pattern.compile("\"(?:[^\"\\\\]|\\\\.)*\"");
    private static final Pattern RANGE = Pattern.compile("\\[[^\\]]*]");
    private static final Pattern GROUPING =
            Pattern.compile("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\(([^)]*)\\)");
    private static final Pattern MATCHERS = Pattern.compile("\\{([^}]*)}");
    private static final Pattern MATCHER = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(=~|!~|!=|=)");
    private static final Pattern LABEL_VALUES = Pattern.compile("label_values\\(\\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\\s*,\\s*([a-zA-Z_][a-zA-Z0-9_]*)\\s*\\)");
    private static final Pattern IDENTIFIER = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    private static final Pattern LEGEND_LABEL = Pattern.compile("\\{\\{\\s*([a-zA-Z_][a-zA-Z0-9_]*)\\s*}}");

    /** One query: where it is (panel title and refId), its text, and what it names. */
    public record Query(String where, String expr, Set<String> metrics, Set<String> labels) {
    }

    private DashboardQueries() {
    }

    /** Whether the query names a family served only where io.cost runs. */
    public static boolean needsIoCost(Query query) {
        return query.metrics().stream().anyMatch(IO_COST_METRICS::contains);
    }

    public static Path file(Path repositoryRoot) {
        return repositoryRoot.resolve("deploy/helm/lvmqos/dashboards/lvmqos.json");
    }

    /** The dashboard's file in this checkout. */
    public static Path file() {
        return file(DeployTree.root());
    }

    @SuppressWarnings("unchecked")
    public static Map<String, Object> dashboard(Path file) {
        try {
            // JSON is YAML: the YAML loader the deploy tests already use reads it
            return (Map<String, Object>) new Yaml(new SafeConstructor(new LoaderOptions()))
                    .load(Files.readString(file, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Every query of the dashboard's panels and template variables. */
    @SuppressWarnings("unchecked")
    public static List<Query> of(Path file) {
        Map<String, Object> dashboard = dashboard(file);
        List<Query> queries = new ArrayList<>();
        for (Object p : (List<Object>) dashboard.get("panels")) {
            Map<String, Object> panel = (Map<String, Object>) p;
            for (Object t : (List<Object>) panel.getOrDefault("targets", List.of())) {
                Map<String, Object> target = (Map<String, Object>) t;
                String where = panel.get("title") + " [" + target.get("refId") + "]";
                Query query = parse(where, (String) target.get("expr"));
                Set<String> labels = new LinkedHashSet<>(query.labels());
                Matcher legend = LEGEND_LABEL.matcher(String.valueOf(target.getOrDefault("legendFormat", "")));
                while (legend.find()) {
                    labels.add(legend.group(1));
                }
                queries.add(new Query(where, query.expr(), query.metrics(), labels));
            }
        }
        Map<String, Object> templating = (Map<String, Object>) dashboard.getOrDefault("templating", Map.of());
        for (Object v : (List<Object>) templating.getOrDefault("list", List.of())) {
            Map<String, Object> variable = (Map<String, Object>) v;
            if ("query".equals(variable.get("type"))) {
                Object query = variable.get("query");
                String expr = query instanceof Map<?, ?> map ? (String) map.get("query") : (String) query;
                queries.add(parse("variable $" + variable.get("name"), expr));
            }
        }
        return queries;
    }

    /** The metric and label names of one expression. */
    static Query parse(String where, String expr) {
        Set<String> metrics = new LinkedHashSet<>();
        Set<String> labels = new LinkedHashSet<>();
        String rest = STRING.matcher(expr).replaceAll("\"\"");
        rest = RANGE.matcher(rest).replaceAll(" ");
        Matcher labelValues = LABEL_VALUES.matcher(rest);
        while (labelValues.find()) {
            metrics.add(labelValues.group(1));
            labels.add(labelValues.group(2));
        }
        rest = labelValues.replaceAll(" ");
        Matcher grouping = GROUPING.matcher(rest);
        while (grouping.find()) {
            for (String label : grouping.group(2).split(",")) {
                if (!label.isBlank()) {
                    labels.add(label.strip());
                }
            }
        }
        rest = grouping.replaceAll(" ");
        Matcher matchers = MATCHERS.matcher(rest);
        while (matchers.find()) {
            Matcher matcher = MATCHER.matcher(matchers.group(1));
            while (matcher.find()) {
                labels.add(matcher.group(1));
            }
        }
        rest = matchers.replaceAll(" ");
        Matcher identifier = IDENTIFIER.matcher(rest);
        while (identifier.find()) {
            String word = identifier.group();
            int after = identifier.end();
            while (after < rest.length() && rest.charAt(after) == ' ') {
                after++;
            }
            boolean call = after < rest.length() && rest.charAt(after) == '(';
            if (call) {
                if (!FUNCTIONS.contains(word)) {
                    throw new IllegalArgumentException(where + ": function " + word + " is not one this reading knows: " + expr);
                }
            } else if (!KEYWORDS.contains(word) && !isNumberPart(rest, identifier.start())) {
                metrics.add(word);
            }
        }
        return new Query(where, expr, metrics, labels);
    }

    /** An identifier-like tail of a number such as 1e3 is not a metric name. */
    private static boolean isNumberPart(String text, int start) {
        return start > 0 && (Character.isDigit(text.charAt(start - 1)) || text.charAt(start - 1) == '.');
    }
}
