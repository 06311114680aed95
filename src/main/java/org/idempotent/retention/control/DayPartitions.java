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
import org.idempotent.postgres.LockRetries;

/**
 * The purge of processed_events partitioned by event ID (V12__processed_events_by_id.sql): the partitions of
 * yesterday, today and the next three days made, then each expired day of v7 IDs detached and dropped, one at a time
 * with a rest after each ({@link PurgePacing#goOnAfterFilesFreed}), so that the space comes back a day at a time. The
 * rules are the database's functions; this only runs them, paces and counts.
 */
final class DayPartitions {

    /** The partitions that the purge deletes from row by row, as in the unpartitioned table: never dropped. */
    static final List<String> ROW_BY_ROW = List.of("processed_events_v7_default", "processed_events_other");

    static final String DAYS_AHEAD = "SELECT processed_events_days_ahead()";
    static final String EXPIRED = "SELECT processed_events_expired_days(make_interval(secs => ?))";
    static final String DETACH = "SELECT processed_events_detach_day(?, make_interval(secs => ?))";
    static final String DROP_DETACHED = "SELECT processed_events_drop_detached_day()";

    private static final Logger LOG = Logger.getLogger(DayPartitions.class.getName());

    /** What a pass dropped, and whether it got through every expired day (false: the budget ran out, or a refusal). */
    record Dropped(int days, long rows, boolean complete) {}

    private DayPartitions() {}

    /**
     * Makes the days ahead, drops a day a purge detached and did not get to drop, then every day partition that
     * {@code window} has passed, oldest first. A detach whose lock is refused every time ({@link PartitionDetach}),
     * or that fails, ends the pass: the next purge goes on from there.
     */
    static Dropped purge(Connection connection, Duration window, PurgePacing pacing) throws SQLException {
        try (PreparedStatement ahead = connection.prepareStatement(DAYS_AHEAD)) {
            ahead.execute();
        }
        while (dropDetached(connection) != null) {
            if (!pacing.goOnAfterFilesFreed()) {
                return new Dropped(0, 0, false);
            }
        }
        int days = 0;
        long rows = 0;
        for (String day : expired(connection, window)) {
            Optional<Long> inIt;
            try {
                inIt = PartitionDetach.rows(connection.prepareStatement(DETACH), day, window);
            } catch (SQLException e) {
                LOG.log(Level.WARNING, "{0} not dropped, the next purge tries again: {1}", new Object[] {
                    day, e.getMessage()
                });
                return new Dropped(days, rows, false);
            }
            if (inIt.isEmpty()) {
                LOG.log(
                        Level.WARNING,
                        "{0} not dropped: its lock was refused {1} times; the next purge tries again",
                        new Object[] {day, LockRetries.ATTEMPTS});
                return new Dropped(days, rows, false);
            }
            dropDetached(connection);
            days++;
            rows += inIt.get();
            if (!pacing.goOnAfterFilesFreed()) {
                return new Dropped(days, rows, false);
            }
        }
        return new Dropped(days, rows, true);
    }

    /** Detached first, then dropped: only the detach holds the consumers. Answers the day dropped, or null. */
    private static String dropDetached(Connection connection) throws SQLException {
        try (PreparedStatement drop = connection.prepareStatement(DROP_DETACHED);
                ResultSet dropped = drop.executeQuery()) {
            dropped.next();
            return dropped.getString(1);
        }
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
