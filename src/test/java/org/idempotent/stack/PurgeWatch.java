package org.idempotent.stack;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;

/**
 * Watches the retention purge of several instances sharing one database: how many purge statements were at work at
 * the same moment, sampled from pg_stat_activity until every expired row is gone.
 */
public final class PurgeWatch {

    /** The most purges seen at work at once, and in how many samples any was. */
    public record Seen(int most, int samplesAtWork, long expiredLeft) {}

    private PurgeWatch() {}

    /** Rows 40 days old, expired under any retention window the product accepts (at most 30 days). */
    public static void insertExpired(Settings settings, int rows) throws SQLException {
        try (Connection db = Database.connect(settings);
                Statement insert = db.createStatement()) {
            insert.execute("INSERT INTO processed_events (event_id, processed_at, fingerprint)"
                    + " SELECT gen_random_uuid(), now() - interval '40 days', 'x'"
                    + " FROM generate_series(1, " + rows + ")");
        }
    }

    /** Samples every 20 ms until no expired row is left or {@code timeout} has passed. */
    public static Seen watch(Settings settings, Duration timeout) throws SQLException, InterruptedException {
        int most = 0;
        int atWork = 0;
        Instant until = Instant.now().plus(timeout);
        try (Connection db = Database.connect(settings);
                Statement statement = db.createStatement()) {
            while (Instant.now().isBefore(until) && expired(statement) > 0) {
                int purging = single(
                        statement,
                        "SELECT count(*) FROM pg_stat_activity WHERE state = 'active'"
                                + " AND pid <> pg_backend_pid() AND query ILIKE 'DELETE FROM processed_events%'");
                most = Math.max(most, purging);
                atWork += purging > 0 ? 1 : 0;
                Thread.sleep(20);
            }
            return new Seen(most, atWork, expired(statement));
        }
    }

    private static long expired(Statement statement) throws SQLException {
        return single(
                statement, "SELECT count(*) FROM processed_events WHERE processed_at < now() - interval '30 days'");
    }

    private static int single(Statement statement, String sql) throws SQLException {
        try (ResultSet row = statement.executeQuery(sql)) {
            row.next();
            return row.getInt(1);
        }
    }
}
