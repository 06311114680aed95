package org.idempotent.retention.control;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import org.idempotent.postgres.BatchedDelete;

/**
 * The slices that delete one table's expired dedup records row by row: the unpartitioned table, and the partitions of
 * a partitioned layout that are never dropped whole. A ctid is unique within one table only, so each table has a
 * statement of its own.
 *
 * <p>A slice deletes the oldest records in processed_at order from where the last one stopped, not from the table's
 * start: the index entries of the rows already deleted stay until a vacuum removes them, and a scan from the start
 * would step over all of them again in every slice, each slice slower than the one before (and the purge's last
 * minutes the heaviest). The WAL a slice wrote is read as the server's WAL position before and after it: the
 * consumers' WAL of those milliseconds is counted too, so the purge's own is never underestimated.
 */
final class ExpiredRows implements BatchedDelete.Batch, AutoCloseable {

    static final String SLICE = """
            WITH gone AS (
                DELETE FROM %1$s WHERE ctid = ANY (ARRAY(
                    SELECT ctid FROM %1$s WHERE processed_at >= coalesce(?::timestamptz, '-infinity')
                       AND processed_at < ?
                     ORDER BY processed_at LIMIT ?))
                RETURNING processed_at)
            SELECT count(*), max(processed_at) FROM gone""";

    // Every table a purge deletes from row by row, each with its constant statement: a table name cannot be bound.
    static final String UNPARTITIONED = SLICE.formatted("processed_events");
    /** The table by event ID: v7 records of a day without a partition, and every other version's. */
    static final String DAYS_DEFAULT = SLICE.formatted("processed_events_v7_default");

    static final String OTHER_VERSIONS = SLICE.formatted("processed_events_other");

    static final String WAL_POSITION = "SELECT pg_current_wal_insert_lsn()::text";
    static final String WAL_SINCE = "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), ?::pg_lsn)::bigint";

    private final PreparedStatement slice;
    private final PreparedStatement position;
    private final PreparedStatement since;
    /** The newest processed_at the last slice deleted; null before the first. */
    private Timestamp floor;

    /** The slices of {@code table}, each at most {@code size} records older than {@code cutoff}. */
    ExpiredRows(Connection connection, String table, Timestamp cutoff, int size) throws SQLException {
        slice = switch (table) {
            case "processed_events" -> connection.prepareStatement(UNPARTITIONED);
            case "processed_events_v7_default" -> connection.prepareStatement(DAYS_DEFAULT);
            case "processed_events_other" -> connection.prepareStatement(OTHER_VERSIONS);
            default -> throw new IllegalArgumentException("no purge of " + table);
        };
        position = connection.prepareStatement(WAL_POSITION);
        since = connection.prepareStatement(WAL_SINCE);
        slice.setTimestamp(2, cutoff);
        slice.setInt(3, size);
    }

    @Override
    public BatchedDelete.Slice delete() throws SQLException {
        String before;
        try (ResultSet lsn = position.executeQuery()) {
            lsn.next();
            before = lsn.getString(1);
        }
        if (floor == null) {
            slice.setNull(1, Types.TIMESTAMP_WITH_TIMEZONE);
        } else {
            slice.setTimestamp(1, floor);
        }
        int rows;
        try (ResultSet gone = slice.executeQuery()) {
            gone.next();
            rows = gone.getInt(1);
            if (rows > 0) {
                floor = gone.getTimestamp(2);
            }
        }
        since.setString(1, before);
        try (ResultSet wal = since.executeQuery()) {
            wal.next();
            return new BatchedDelete.Slice(rows, wal.getLong(1));
        }
    }

    @Override
    public void close() throws SQLException {
        try (slice;
                position;
                since) {
            // closed in reverse order, each even if another fails
        }
    }
}
