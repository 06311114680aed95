package org.idempotent.documents;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** What the documents say of the alert rules, the dashboard and the metrics. */
final class MonitoringClaims {

    static final String RUNBOOKS = "operations.md";

    private static final Pattern ALERT_HEADING = Pattern.compile("(?m)^#+ Alert: (\\S+)\\s*$");
    /** A table's cell naming an alert: the name, or a link to its section. */
    private static final Pattern ALERT_CELL = Pattern.compile("\\[?([A-Z][A-Za-z0-9]+)]?(?:\\(#[^)]*\\))?");

    private static final Pattern PARENTHESES = Pattern.compile("\\s*\\([^)]*\\)");

    private MonitoringClaims() {}

    /**
     * A series name of the product's or the broker's families in a code span: the code registers it, or, for the
     * broker's, a rule, a panel or a test reads it.
     */
    static List<String> unknownMetrics(List<Document> documents) {
        Set<String> metrics = Monitoring.metrics();
        Set<String> sql = Codebase.sqlWords();
        List<String> findings = new ArrayList<>();
        for (Document document : documents) {
            for (Document.Hit span : document.spans()) {
                String text = Document.text(span);
                Matcher name = Monitoring.METRIC.matcher(text);
                while (name.find()) {
                    // A glob (retention_*) names a family; a quoted word is a label's value or a role's name.
                    boolean glob = name.end() < text.length() && text.charAt(name.end()) == '*';
                    boolean quoted = name.start() > 0 && "\"'".indexOf(text.charAt(name.start() - 1)) >= 0;
                    if (!glob && !quoted && !sql.contains(name.group()) && !metrics.contains(name.group())) {
                        findings.add(span.at() + ": metric " + name.group() + " is registered by no code"
                                + (name.group().startsWith("artemis_") ? " and read by no rule, panel or test" : ""));
                    }
                }
            }
        }
        return findings;
    }

    /** Each "Alert: X" section and each row of an alert table is a rule, with the rule's for and severity. */
    static List<String> unknownAlerts(List<Document> documents) {
        Map<String, Monitoring.Alert> alerts = Monitoring.alerts();
        List<String> findings = new ArrayList<>();
        for (Document document : documents) {
            for (Document.Hit heading : document.find(ALERT_HEADING)) {
                if (!alerts.containsKey(heading.group(1))) {
                    findings.add(heading.at() + ": alert " + heading.group(1) + " is no rule of " + Monitoring.RULES);
                }
            }
            for (Table table : Table.headed(document, "alert")) {
                int duration = table.column("for");
                int severity = table.column("severity");
                for (Table.Row row : table.rows()) {
                    Matcher cell = ALERT_CELL.matcher(row.cell(0));
                    String at = document.name() + ":" + row.line() + ": alert ";
                    Monitoring.Alert alert = cell.matches() ? alerts.get(cell.group(1)) : null;
                    if (alert == null) {
                        findings.add(at + row.cell(0) + " is no rule of " + Monitoring.RULES);
                        continue;
                    }
                    if (duration >= 0 && !row.cell(duration).equals(alert.duration())) {
                        findings.add(at + alert.name() + " has for: " + alert.duration() + " in the rules, the"
                                + " document says " + row.cell(duration));
                    }
                    if (severity >= 0 && !row.cell(severity).equals(alert.severity())) {
                        findings.add(at + alert.name() + " has severity " + alert.severity() + " in the rules, the"
                                + " document says " + row.cell(severity));
                    }
                }
            }
        }
        return findings;
    }

    /** Every rule has its section in the runbook, and its row in the runbook's table of alerts. */
    static List<String> missingRunbooks(List<Document> documents) {
        List<String> findings = new ArrayList<>();
        for (Document document : documents) {
            if (!document.name().equals(RUNBOOKS)) {
                continue;
            }
            Set<String> sections = new HashSet<>();
            document.find(ALERT_HEADING).forEach(heading -> sections.add(heading.group(1)));
            Set<String> rows = new HashSet<>();
            // Where a missing alert belongs: the table of alerts, which the sections follow.
            String at = RUNBOOKS + ":"
                    + Table.headed(document, "alert").stream()
                            .filter(table -> !table.rows().isEmpty())
                            .map(table -> table.rows().getFirst().line() - 2)
                            .findFirst()
                            .orElse(1);
            Table.headed(document, "alert")
                    .forEach(table -> table.rows().forEach(row -> {
                        Matcher cell = ALERT_CELL.matcher(row.cell(0));
                        if (cell.matches()) {
                            rows.add(cell.group(1));
                        }
                    }));
            for (String alert : Monitoring.alerts().keySet()) {
                if (!sections.contains(alert)) {
                    findings.add(at + ": alert " + alert + " of " + Monitoring.RULES + " has no section"
                            + " \"### Alert: " + alert + "\"");
                }
                if (!rows.contains(alert)) {
                    findings.add(at + ": alert " + alert + " of " + Monitoring.RULES + " has no row in the"
                            + " table of alerts");
                }
            }
        }
        return findings;
    }

    /**
     * A panel table's first column names the dashboard's panels, each by its title or the title's start with its
     * parenthesised remarks left out; and every panel has its row.
     */
    static List<String> unknownPanels(List<Document> documents) {
        List<String> titles = Monitoring.panelTitles();
        List<String> findings = new ArrayList<>();
        for (Document document : documents) {
            for (Table table : Table.headed(document, "panel")) {
                List<String> named =
                        table.rows().stream().map(row -> row.cell(0)).toList();
                for (Table.Row row : table.rows()) {
                    if (titles.stream().noneMatch(title -> names(row.cell(0), title))) {
                        findings.add(document.name() + ":" + row.line() + ": panel \"" + row.cell(0) + "\" is no"
                                + " panel of " + Monitoring.DASHBOARD);
                    }
                }
                for (String title : titles) {
                    if (named.stream().noneMatch(cell -> names(cell, title))) {
                        findings.add(
                                document.name() + ":" + table.rows().getFirst().line() + ": panel \"" + title + "\" of "
                                        + Monitoring.DASHBOARD + " has no row in the table");
                    }
                }
            }
        }
        return findings;
    }

    private static boolean names(String cell, String title) {
        String shortTitle = PARENTHESES.matcher(title).replaceAll("");
        return !cell.isBlank() && (title.startsWith(cell) || shortTitle.startsWith(cell));
    }
}
