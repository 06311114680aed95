package org.idempotent.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;

/**
 * What the volume fill asks of the schema, whichever dedup mode installed it: the partitions of the filled days, made
 * by the schema's own functions (so that no row lands in a default partition a real past would not have put there),
 * which columns processed_events has yet, and a table's indexes set aside for a bulk load.
 */
final class VolumeSchema {

    private VolumeSchema() {}

    /**
     * In the table by ID, each filled day's partition, by the function the schema's owner runs.
     */
    static void dedupPartitions(Connection db, Instant from, Instant to) throws SQLException {
        if (has(
                db,
                "SELECT count(*) FROM pg_partitioned_table WHERE partrelid = 'processed_events'::regclass"
                        + " AND partstrat = 'l'")) {
            forEachDay(db, "SELECT processed_events_day_partition(?)", from, to);
        }
    }

    static void outboxPartitions(Connection db, Instant from, Instant to) throws SQLException {
        forEachDay(db, "SELECT announcement_partition(?)", from, to);
    }

    private static void forEachDay(Connection db, String call, Instant from, Instant to) throws SQLException {
        try (PreparedStatement partition = db.prepareStatement(call)) {
            LocalDate last = LocalDate.ofInstant(to, ZoneOffset.UTC);
            for (LocalDate day = LocalDate.ofInstant(from, ZoneOffset.UTC); !day.isAfter(last); day = day.plusDays(1)) {
                partition.setObject(1, day);
                partition.execute();
            }
        }
    }

    /**
     * Drops {@code table}'s indexes and its primary key and unique constraints (on a partitioned table, those of every
     * partition with them); answers the statements that make them again.
     */
    static List<String> dropIndexes(Connection db, String table) throws SQLException {
        List<String> drop = new ArrayList<>();
        List<String> rebuild = new ArrayList<>();
        try (PreparedStatement query = db.prepareStatement("""
                        SELECT c.conname, pg_get_constraintdef(c.oid), i.indexrelid::regclass::text,
                               pg_get_indexdef(i.indexrelid)
                          FROM pg_index i LEFT JOIN pg_constraint c ON c.conindid = i.indexrelid
                                                                   AND c.conrelid = i.indrelid
                         WHERE i.indrelid = CAST(? AS regclass)""");
                ResultSet indexes = setting(query, table).executeQuery()) {
            while (indexes.next()) {
                String constraint = indexes.getString(1);
                if (constraint != null) {
                    drop.add("ALTER TABLE " + table + " DROP CONSTRAINT " + constraint);
                    rebuild.add("ALTER TABLE " + table + " ADD CONSTRAINT " + constraint + " " + indexes.getString(2));
                } else {
                    drop.add("DROP INDEX " + indexes.getString(3));
                    // A partitioned table's index reads ON ONLY, which would leave its partitions without one.
                    rebuild.add(indexes.getString(4).replace(" ON ONLY ", " ON "));
                }
            }
        }
        try (Statement sql = db.createStatement()) {
            for (String statement : drop) {
                sql.execute(statement);
            }
        }
        return rebuild;
    }

    private static PreparedStatement setting(PreparedStatement query, String value) throws SQLException {
        query.setString(1, value);
        return query;
    }

    /** Whether processed_events has {@code column}: a schema of an older build may not have it yet. */
    static boolean hasColumn(Connection db, String column) throws SQLException {
        try (PreparedStatement query = db.prepareStatement(
                "SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema()"
                        + " AND table_name = 'processed_events' AND column_name = ?")) {
            query.setString(1, column);
            try (ResultSet row = query.executeQuery()) {
                row.next();
                return row.getLong(1) > 0;
            }
        }
    }

    private static boolean has(Connection db, String count) throws SQLException {
        try (Statement sql = db.createStatement();
                ResultSet row = sql.executeQuery(count)) {
            row.next();
            return row.getLong(1) > 0;
        }
    }
}
