package org.idempotent.bench;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.idempotent.announcement.control.OutboxCursor;
import org.idempotent.stack.Database;
import org.idempotent.stack.Settings;

/**
 * The outbox relay's passes in a measured pass (--relay-passes), from pg_stat_statements: a relay's pass starts with
 * one query of its position ({@code OutboxCursor.POSITION}), so its calls by the application's role count the passes,
 * for a WAR of an older commit too (if its relay asks the same). Printed per pass and as medians: passes per message,
 * the relay's statements' execution time per pass (pg_stat_statements' total_exec_time of every statement of {@link
 * OutboxCursor} and of the advisory lock's try and release, which the purge's schedule also calls, a few times a
 * minute), and PostgreSQL's whole CPU in the pass divided by the passes (an upper bound: the payments' own statements
 * are in it too).
 *
 * <p>pg_stat_statements must be loaded when the cluster starts, and it then hashes every statement of every variant:
 * a cost on PostgreSQL's CPU that falls on the product and the peer alike, but is not in a run without it. So this is
 * an option, and a run's CPU figures are compared only with those of runs with the same options.
 */
final class RelayPasses {

    /** A pass's relay figures; {@code passes} 0: the WAR asked no position (an older relay, or none). */
    record Passes(long passes, double perMessage, double statementMillisPerPass, double postgresCpuMillisPerPass) {}

    /** Calls and execution time so far of each statement, by its normalised text. */
    record Snapshot(Map<String, double[]> statements) {}

    private static final String POSITION = normalise(statementOf("POSITION"));

    private static final List<String> RELAY = relayStatements();

    private RelayPasses() {}

    static Snapshot take(Settings settings) throws SQLException {
        Map<String, double[]> statements = new HashMap<>();
        try (Connection db = Database.connect(settings);
                PreparedStatement query =
                        db.prepareStatement("SELECT query, calls, total_exec_time FROM pg_stat_statements s"
                                + " JOIN pg_roles r ON r.oid = s.userid WHERE r.rolname = ?"
                                + " AND s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())")) {
            query.setString(1, settings.get("DB_USER"));
            try (ResultSet row = query.executeQuery()) {
                while (row.next()) {
                    statements.merge(
                            normalise(row.getString(1)), new double[] {row.getLong(2), row.getDouble(3)}, (a, b) ->
                                    new double[] {a[0] + b[0], a[1] + b[1]});
                }
            }
        }
        return new Snapshot(statements);
    }

    /**
     * The pass's relay figures between two snapshots, printed.
     *
     * @param postgresCpuMillis PostgreSQL's CPU in the measured window (all its processes)
     */
    static Passes passEnded(Settings settings, Snapshot from, long messages, double postgresCpuMillis)
            throws SQLException {
        Snapshot to = take(settings);
        double passes = 0;
        double relayMillis = 0;
        for (Map.Entry<String, double[]> statement : to.statements().entrySet()) {
            double[] before = from.statements().getOrDefault(statement.getKey(), new double[2]);
            if (statement.getKey().equals(POSITION)) {
                passes += statement.getValue()[0] - before[0];
            }
            if (RELAY.contains(statement.getKey())) {
                relayMillis += statement.getValue()[1] - before[1];
            }
        }
        Passes relay = passes == 0
                ? new Passes(0, 0, 0, 0)
                : new Passes((long) passes, passes / messages, relayMillis / passes, postgresCpuMillis / passes);
        if (relay.passes() == 0) {
            System.out.println("    Relay: no pass (no position asked)");
        } else {
            System.out.printf(
                    Locale.ROOT,
                    "    Relay: %d passes, %.4f per message; per pass: the relay's statements %.3f ms of execution"
                            + " (pg_stat_statements), PostgreSQL's CPU in the pass / passes %.2f ms%n",
                    relay.passes(),
                    relay.perMessage(),
                    relay.statementMillisPerPass(),
                    relay.postgresCpuMillisPerPass());
        }
        return relay;
    }

    /**
     * Every statement of OutboxCursor (its constants are the relay's statements, package-private in the product: read
     * here, so that a change to the relay is counted without a change here) and the advisory lock's two.
     */
    private static List<String> relayStatements() {
        List<String> statements = new ArrayList<>();
        for (Field field : OutboxCursor.class.getDeclaredFields()) {
            if (Modifier.isStatic(field.getModifiers()) && field.getType() == String.class) {
                statements.add(normalise(statementOf(field.getName())));
            }
        }
        statements.add(normalise("SELECT pg_try_advisory_lock(?)"));
        statements.add(normalise("SELECT pg_advisory_unlock(?)"));
        return statements;
    }

    private static String statementOf(String name) {
        try {
            Field field = OutboxCursor.class.getDeclaredField(name);
            field.setAccessible(true);
            return (String) field.get(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(
                    "OutboxCursor." + name + " is gone: the relay's passes cannot be counted", e);
        }
    }

    /**
     * pg_stat_statements keeps a statement's text as sent (pgjdbc's $1 for each ?) with its constants replaced by $n,
     * and white space as written: every parameter and number as ?, white space collapsed, on both sides.
     */
    static String normalise(String statement) {
        return statement
                .replaceAll("\\$\\d+", "?")
                .replaceAll("\\b\\d+\\b", "?")
                .replaceAll("\\s+", " ")
                .strip();
    }
}
