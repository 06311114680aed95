package org.idempotent.retention.control;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The purge of processed_events partitioned by day (V8__processed_events_by_day.sql): the next days' partitions made,
 * then each expired day dropped whole, one transaction each, on a connection in autocommit. The rules are the
 * database's functions; this only runs them and counts.
 */
final class DayPartitions {

    /** The partitions that the purge deletes from row by row, as in the unpartitioned table: never dropped. */
    static final List<String> ROW_BY_ROW = List.of("processed_events_default", "processed_events_legacy");

    static final String DAYS_AHEAD = "SELECT processed_events_days_ahead()";
    static final String EXPIRED = "SELECT processed_events_expired_days(make_interval(secs => ?))";
    static final String DROP = "SELECT processed_events_drop_day(?, make_interval(secs => ?))";

    private static final Logger LOG = Logger.getLogger(DayPartitions.class.getName());

    /** What a pass dropped: days and the rows that were in them. */
    record Dropped(int days, long rows) {}

    private DayPartitions() {}

    /**
     * Makes today's and the next two days' partitions, then drops every day partition that {@code window} has passed,
     * oldest first. A drop refused (its lock not granted within the function's lock_timeout, say) ends the pass: the
     * next purge goes on from there.
     */
    static Dropped purge(Connection connection, Duration window) throws SQLException {
        try (PreparedStatement ahead = connection.prepareStatement(DAYS_AHEAD)) {
            ahead.execute();
        }
        int days = 0;
        long rows = 0;
        for (String day : expired(connection, window)) {
            long inIt;
            try (PreparedStatement drop = connection.prepareStatement(DROP)) {
                drop.setString(1, day);
                drop.setDouble(2, window.toSeconds());
                try (ResultSet counted = drop.executeQuery()) {
                    counted.next();
                    inIt = counted.getLong(1);
                }
            } catch (SQLException e) {
                LOG.log(Level.WARNING, "{0} not dropped, the next purge tries again: {1}", new Object[] {
                    day, e.getMessage()
                });
                break;
            }
            days++;
            rows += inIt;
        }
        return new Dropped(days, rows);
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
