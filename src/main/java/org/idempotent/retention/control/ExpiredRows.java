package org.idempotent.retention.control;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * The batch that deletes a table's expired dedup records, row by row: the unpartitioned table, and the partitions of
 * a partitioned layout that are never dropped whole. A ctid is unique within one table only, so each partition has a
 * statement of its own.
 */
final class ExpiredRows {

    static final String DELETE_BATCH = """
            DELETE FROM processed_events
             WHERE ctid = ANY (ARRAY(SELECT ctid FROM processed_events WHERE processed_at < ? LIMIT ?))""";

    /** The table by week's default partition, and the unpartitioned table a conversion made its legacy partition. */
    static final String DELETE_DEFAULT_BATCH = """
            DELETE FROM processed_events_default
             WHERE ctid = ANY (ARRAY(SELECT ctid FROM processed_events_default WHERE processed_at < ? LIMIT ?))""";

    static final String DELETE_LEGACY_BATCH = """
            DELETE FROM processed_events_legacy
             WHERE ctid = ANY (ARRAY(SELECT ctid FROM processed_events_legacy WHERE processed_at < ? LIMIT ?))""";

    /** In the table by event ID: v7 records of a day without a partition, and every other version's. */
    static final String DELETE_DEFAULT_DAY_BATCH = """
            DELETE FROM processed_events_v7_default
             WHERE ctid = ANY (ARRAY(SELECT ctid FROM processed_events_v7_default WHERE processed_at < ? LIMIT ?))""";

    static final String DELETE_OTHER_BATCH = """
            DELETE FROM processed_events_other
             WHERE ctid = ANY (ARRAY(SELECT ctid FROM processed_events_other WHERE processed_at < ? LIMIT ?))""";

    private ExpiredRows() {}

    /** The batch of {@code table}: its cutoff is parameter 1, its size parameter 2. */
    static PreparedStatement deleteBatch(Connection connection, String table) throws SQLException {
        return switch (table) {
            case "processed_events" -> connection.prepareStatement(DELETE_BATCH);
            case "processed_events_default" -> connection.prepareStatement(DELETE_DEFAULT_BATCH);
            case "processed_events_legacy" -> connection.prepareStatement(DELETE_LEGACY_BATCH);
            case "processed_events_v7_default" -> connection.prepareStatement(DELETE_DEFAULT_DAY_BATCH);
            case "processed_events_other" -> connection.prepareStatement(DELETE_OTHER_BATCH);
            default -> throw new IllegalArgumentException("no purge of " + table);
        };
    }
}
