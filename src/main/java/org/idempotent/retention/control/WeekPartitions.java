package org.idempotent.retention.control;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The purge of processed_events partitioned by week (V8__processed_events_by_week.sql): this week's and the next
 * week's partitions made, then each expired week dropped whole, one transaction each, on a connection in autocommit.
 * The rules are the database's functions; this only runs them and counts.
 */
final class WeekPartitions {

    /** The partitions that the purge deletes from row by row, as in the unpartitioned table: never dropped. */
    static final List<String> ROW_BY_ROW = List.of("processed_events_default", "processed_events_legacy");

    static final String WEEKS_AHEAD = "SELECT processed_events_weeks_ahead()";
    static final String EXPIRED = "SELECT processed_events_expired_weeks(make_interval(secs => ?))";
    static final String DETACH = "SELECT processed_events_detach_week(?, make_interval(secs => ?))";
    static final String DROP_DETACHED = "SELECT processed_events_drop_detached()";

    private static final Logger LOG = Logger.getLogger(WeekPartitions.class.getName());

    /** What a pass dropped: weeks and the rows that were in them. */
    record Dropped(int weeks, long rows) {}

    private WeekPartitions() {}

    /**
     * Makes this week's and the next week's partitions, then drops every week partition that {@code window} has
     * passed, oldest first. A detach whose lock is refused every time ({@link PartitionDetach}), or that fails, ends
     * the pass: the next purge goes on from there.
     */
    static Dropped purge(Connection connection, Duration window) throws SQLException {
        try (PreparedStatement ahead = connection.prepareStatement(WEEKS_AHEAD)) {
            ahead.execute();
        }
        dropDetached(connection);
        int weeks = 0;
        long rows = 0;
        for (String week : expired(connection, window)) {
            Optional<Long> inIt;
            try {
                inIt = PartitionDetach.rows(connection.prepareStatement(DETACH), week, window);
            } catch (SQLException e) {
                LOG.log(Level.WARNING, "{0} not dropped, the next purge tries again: {1}", new Object[] {
                    week, e.getMessage()
                });
                break;
            }
            if (inIt.isEmpty()) {
                LOG.log(Level.WARNING, "{0} not dropped: its lock was refused; the next purge tries again", week);
                break;
            }
            dropDetached(connection);
            weeks++;
            rows += inIt.get();
        }
        return new Dropped(weeks, rows);
    }

    /** Detached first, then dropped: only the detach holds the consumers (V8__processed_events_by_week.sql). */
    private static void dropDetached(Connection connection) throws SQLException {
        try (PreparedStatement drop = connection.prepareStatement(DROP_DETACHED)) {
            drop.execute();
        }
    }

    /** Those of {@link #ROW_BY_ROW} that exist. */
    static List<String> rowByRow(Connection connection) throws SQLException {
        List<String> present = new ArrayList<>();
        try (PreparedStatement query = connection.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
            for (String table : ROW_BY_ROW) {
                query.setString(1, table);
                try (ResultSet row = query.executeQuery()) {
                    row.next();
                    if (row.getBoolean(1)) {
                        present.add(table);
                    }
                }
            }
        }
        return present;
    }

    private static List<String> expired(Connection connection, Duration window) throws SQLException {
        List<String> names = new ArrayList<>();
        try (PreparedStatement query = connection.prepareStatement(EXPIRED)) {
            query.setDouble(1, window.toSeconds());
            try (ResultSet rows = query.executeQuery()) {
                while (rows.next()) {
                    names.add(rows.getString(1));
                }
            }
        }
        return names;
    }
}
