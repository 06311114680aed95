package org.idempotent.operations;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.idempotent.fixtures.PrometheusServer;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * The shape of the alert rules and the dashboard: what an operator is pointed at exists, every alert has promtool unit
 * tests both ways, the system test's rule file differs from the shipped one in {@code for:} alone. Whether the rules
 * evaluate and fire is AlertRulesIT's (promtool) and OperationsIT's (a real Prometheus).
 */
class MonitoringFilesTest {

    private static final Path OPERATIONS = Path.of("src", "site", "markdown", "operations.md");
    private static final Pattern HEADING = Pattern.compile("(?m)^#+ (.+)$");

    @Test
    @SuppressWarnings("unchecked")
    void everyAlertHasASummaryAndARunbookSectionInOperationsMd() throws IOException {
        Set<String> anchors = new HashSet<>();
        Matcher heading = HEADING.matcher(Files.readString(OPERATIONS));
        while (heading.find()) {
            anchors.add(slug(heading.group(1)));
        }

        List<Map<String, Object>> alerts = alerts(load(PrometheusServer.RULES));
        assertThat(alerts).hasSizeGreaterThanOrEqualTo(10);
        for (Map<String, Object> alert : alerts) {
            String name = (String) alert.get("alert");
            Map<String, String> annotations = (Map<String, String>) alert.get("annotations");
            assertThat(annotations.get("summary")).as(name).isNotBlank();
            String anchor = "alert-" + name.toLowerCase(Locale.ROOT);
            assertThat(annotations.get("runbook_url")).as(name).isEqualTo(OPERATIONS + "#" + anchor);
            assertThat(anchors).as("a section of operations.md for " + name).contains(anchor);
            assertThat(((Map<String, String>) alert.get("labels")).get("severity"))
                    .as(name)
                    .isIn("critical", "warning");
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void everyAlertIsUnitTestedFiringAndNotFiring() throws IOException {
        Map<String, Object> tests = load(PrometheusServer.RULE_TESTS);
        assertThat((List<String>) tests.get("rule_files"))
                .containsExactly(PrometheusServer.RULES.getFileName().toString());
        Set<String> firing = new HashSet<>();
        Set<String> silent = new HashSet<>();
        for (Map<String, Object> test : (List<Map<String, Object>>) tests.get("tests")) {
            for (Map<String, Object> check : (List<Map<String, Object>>) test.get("alert_rule_test")) {
                List<?> expected = (List<?>) check.get("exp_alerts");
                (expected == null || expected.isEmpty() ? silent : firing).add((String) check.get("alertname"));
            }
        }

        for (Map<String, Object> alert : alerts(load(PrometheusServer.RULES))) {
            assertThat(firing).as("a test where it fires").contains((String) alert.get("alert"));
            assertThat(silent).as("a test where it does not").contains((String) alert.get("alert"));
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void theSystemTestsRulesAreTheShippedOnesWithEveryDurationScaledDown() throws IOException {
        List<Map<String, Object>> shipped = alerts(load(PrometheusServer.RULES));
        List<Map<String, Object>> scaled = alerts(new Yaml().load(PrometheusServer.scaledRules()));

        assertThat(scaled).hasSameSizeAs(shipped);
        for (int i = 0; i < shipped.size(); i++) {
            Map<String, Object> original = shipped.get(i);
            Map<String, Object> fast = scaled.get(i);
            assertThat(fast.keySet()).isEqualTo(original.keySet());
            for (String key : original.keySet()) {
                if (key.equals("for")) {
                    assertThat(PrometheusServer.parse((String) fast.get(key)))
                            .isEqualTo(PrometheusServer.parse((String) original.get(key))
                                    .dividedBy(PrometheusServer.TIME_SCALE));
                } else if (key.equals("expr")) {
                    assertThat(fast.get(key)).as(key).isEqualTo(PrometheusServer.scaledRanges((String)
                            original.get(key)));
                } else {
                    assertThat(fast.get(key)).as(key).isEqualTo(original.get(key));
                }
            }
        }
        assertThat(PrometheusServer.parse("1h30m")).isEqualTo(Duration.ofMinutes(90));
        assertThat(PrometheusServer.scaledRanges(
                        "min_over_time(x{a=\"[b]\"}[1d]) > rate(y[10m]) > z[1h30m] > w offset 5m"))
                .isEqualTo("min_over_time(x{a=\"[b]\"}[1440000ms]) > rate(y[10000ms]) > z[90000ms] > w offset 5000ms");
    }

    @Test
    void aSelectorIsAMetricWithItsMatchersAndNoFunctionLabelOrRange() {
        assertThat(PrometheusServer.selectors("max by (instance) (payments_database_breaker_open_seconds) > 60"))
                .containsExactly("payments_database_breaker_open_seconds");
        assertThat(
                        PrometheusServer.selectors(
                                "max by (queue) (artemis_consumer_count{queue=~\"payments|refunds\"}) == 0 and on (queue)"
                                        + " max by (queue) (delta(artemis_message_count{queue=~\"payments|refunds\"}[5m])) > 0"))
                .containsExactly(
                        "artemis_consumer_count{queue=~\"payments|refunds\"}",
                        "artemis_message_count{queue=~\"payments|refunds\"}");
        assertThat(PrometheusServer.selectors("time() - max(retention_last_success_timestamp_seconds) > 2 * 1e6"))
                .containsExactly("retention_last_success_timestamp_seconds");
    }

    @Test
    void theDashboardReadsEveryQueryFromItsDatasourceVariableOnACurrentSchema() throws IOException {
        JsonObject dashboard;
        try (Reader reader = Files.newBufferedReader(PrometheusServer.DASHBOARD)) {
            dashboard = Json.createReader(reader).readObject();
        }

        // Grafana 12's classic model; Grafana migrates an older one on import, and keeps a newer one as it is.
        assertThat(dashboard.getInt("schemaVersion")).isGreaterThanOrEqualTo(41);
        JsonObject variable =
                dashboard.getJsonObject("templating").getJsonArray("list").getJsonObject(0);
        assertThat(variable.getString("type")).isEqualTo("datasource");
        assertThat(variable.getString("query")).isEqualTo("prometheus");
        String reference = "${" + variable.getString("name") + "}";
        Set<Integer> ids = new HashSet<>();
        for (JsonValue value : dashboard.getJsonArray("panels")) {
            JsonObject panel = value.asJsonObject();
            String title = panel.getString("title");
            assertThat(ids.add(panel.getInt("id"))).as("unique id of " + title).isTrue();
            assertThat(panel.getJsonObject("datasource").getString("uid"))
                    .as(title)
                    .isEqualTo(reference);
            JsonObject place = panel.getJsonObject("gridPos");
            assertThat(place.getInt("x") + place.getInt("w")).as(title).isLessThanOrEqualTo(24);
            assertThat(panel.getString("description")).as(title).isNotBlank();
            for (JsonValue target : panel.getJsonArray("targets")) {
                assertThat(target.asJsonObject().getJsonObject("datasource").getString("uid"))
                        .as(title)
                        .isEqualTo(reference);
                assertThat(target.asJsonObject().getString("expr")).as(title).doesNotContain("$");
            }
        }
    }

    /** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
    private static String slug(String heading) {
        return heading.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9 _-]", "").replace(' ', '-');
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> alerts(Map<String, Object> rules) {
        return ((List<Map<String, Object>>) rules.get("groups"))
                .stream()
                        .flatMap(group -> ((List<Map<String, Object>>) group.get("rules")).stream())
                        .filter(rule -> rule.containsKey("alert"))
                        .toList();
    }

    private static Map<String, Object> load(Path file) throws IOException {
        try (Reader reader = Files.newBufferedReader(file)) {
            return new Yaml().load(reader);
        }
    }
}
