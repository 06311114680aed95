package org.idempotent.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.idempotent.stack.Database;
import org.idempotent.stack.Settings;

/**
 * What the consumer asked PostgreSQL for in a pass, per message (--statements): pg_stat_statements' calls and rows of
 * each statement the application's role ran between two snapshots. Counted, not timed: the extension's own cost is
 * small but not nothing, so a run that counts is not one to quote CPU figures from.
 */
final class StatementCounts {

    /** The cluster setting that loads the extension; it cannot be loaded later. */
    static final String PRELOAD = "shared_preload_libraries = 'pg_stat_statements'";

    /** Below this many calls per message a statement is the relay's timer or a probe, not the path. */
    private static final double SHOWN_FROM = 0.005;

    /** Calls and rows of each statement so far, by its normalised text. */
    record Snapshot(Map<String, long[]> statements) {}

    private StatementCounts() {}

    /** In a database just made: the extension's view (the counting itself is cluster-wide from the start). */
    static void install(Settings settings) throws SQLException {
        try (Connection db = Database.connect(settings);
                Statement statement = db.createStatement()) {
            statement.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
        }
    }

    static Snapshot take(Settings settings) throws SQLException {
        Map<String, long[]> statements = new HashMap<>();
        try (Connection db = Database.connect(settings);
                PreparedStatement query = db.prepareStatement("SELECT query, calls, rows FROM pg_stat_statements s"
                        + " JOIN pg_roles r ON r.oid = s.userid WHERE r.rolname = ?"
                        + " AND s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())")) {
            query.setString(1, settings.get("DB_USER"));
            try (ResultSet row = query.executeQuery()) {
                while (row.next()) {
                    // One text may have several entries (top-level or not); their counts add up.
                    statements.merge(
                            row.getString(1).replaceAll("\\s+", " "),
                            new long[] {row.getLong(2), row.getLong(3)},
                            (a, b) -> new long[] {a[0] + b[0], a[1] + b[1]});
                }
            }
        }
        return new Snapshot(statements);
    }

    /** The statements run since {@code from}, calls and rows per message, and the calls per message in all. */
    static void print(Settings settings, Snapshot from, long messages) throws SQLException {
        Snapshot to = take(settings);
        double total = 0;
        StringBuilder lines = new StringBuilder();
        for (Map.Entry<String, long[]> statement : to.statements().entrySet()) {
            long[] before = from.statements().getOrDefault(statement.getKey(), new long[2]);
            double calls = (double) (statement.getValue()[0] - before[0]) / messages;
            double rows = (double) (statement.getValue()[1] - before[1]) / messages;
            total += calls;
            if (calls >= SHOWN_FROM) {
                String text = statement.getKey();
                lines.append(String.format(
                        Locale.ROOT,
                        "      %6.3f calls %6.3f rows  %s%n",
                        calls,
                        rows,
                        text.length() > 110 ? text.substring(0, 110) + "..." : text));
            }
        }
        System.out.printf(Locale.ROOT, "    Statements per message: %.2f%n%s", total, lines);
    }
}
