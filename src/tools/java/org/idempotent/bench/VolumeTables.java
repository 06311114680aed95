package org.idempotent.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * The dedup table's and the outbox's footprint and autovacuum's work on them, summed over their partitions (either
 * dedup mode, and the outbox's days): what a phase of the volume benchmark leaves, compared with the next.
 */
final class VolumeTables {

    /**
     * pg_partition_tree answers nothing for a table that is not partitioned: the table itself is added. The statistics
     * are those the server has flushed; autovacuum's workers report theirs as they finish.
     */
    private static final String TABLE = """
            SELECT CAST(t.relid AS oid), pg_table_size(t.relid), pg_indexes_size(t.relid),
                   coalesce(s.n_live_tup, 0), coalesce(s.n_dead_tup, 0),
                   coalesce(s.autovacuum_count, 0), coalesce(s.autoanalyze_count, 0)
              FROM (SELECT relid FROM pg_partition_tree(CAST(? AS regclass)) UNION SELECT CAST(? AS regclass)) t
                   LEFT JOIN pg_stat_user_tables s ON s.relid = t.relid""";

    /**
     * One table (and its partitions) at one moment; autovacuum's and autoanalyze's runs per partition, so that the
     * runs since an earlier moment are those of the partitions still there (a dropped day takes its counts along).
     */
    record Table(long tableBytes, long indexBytes, long liveRows, long deadRows, Map<Long, long[]> runs) {

        long totalBytes() {
            return tableBytes + indexBytes;
        }

        /** Sizes now, with the autovacuum and autoanalyze runs since {@code before}. */
        String since(Table before) {
            return String.format(
                    Locale.ROOT,
                    "table %,.0f MB + indexes %,.0f MB = %,.0f MB; ~%,d live rows, ~%,d dead;"
                            + " autovacuum runs %d, autoanalyze runs %d",
                    tableBytes / 1e6,
                    indexBytes / 1e6,
                    totalBytes() / 1e6,
                    liveRows,
                    deadRows,
                    runsSince(before, 0),
                    runsSince(before, 1));
        }

        private long runsSince(Table before, int which) {
            long since = 0;
            for (Map.Entry<Long, long[]> now : runs.entrySet()) {
                long[] then = before.runs.get(now.getKey());
                since += now.getValue()[which] - (then == null ? 0 : then[which]);
            }
            return since;
        }
    }

    /** Both tables at one moment. */
    record Snapshot(Table dedup, Table outbox) {}

    private VolumeTables() {}

    static Snapshot take(Settings settings) throws SQLException {
        try (Connection db = Database.connect(settings)) {
            return new Snapshot(table(db, "processed_events"), table(db, "payment_announcements"));
        }
    }

    /** The settings that decide what autovacuum does here, in one line: the run says what it ran against. */
    static String autovacuumSettings(Settings settings) throws SQLException {
        StringBuilder line = new StringBuilder();
        try (Connection db = Database.connect(settings);
                Statement sql = db.createStatement();
                ResultSet rows = sql.executeQuery("""
                        SELECT name, current_setting(name) FROM pg_settings
                         WHERE name IN ('autovacuum', 'autovacuum_naptime', 'autovacuum_vacuum_scale_factor',
                                        'autovacuum_vacuum_insert_scale_factor', 'autovacuum_vacuum_cost_limit',
                                        'autovacuum_vacuum_cost_delay', 'shared_buffers', 'max_wal_size',
                                        'maintenance_work_mem', 'track_commit_timestamp', 'server_version')
                         ORDER BY name""")) {
            while (rows.next()) {
                line.append(line.length() == 0 ? "" : ", ")
                        .append(rows.getString(1))
                        .append(" = ")
                        .append(rows.getString(2));
            }
        }
        return line.toString();
    }

    private static Table table(Connection db, String name) throws SQLException {
        try (PreparedStatement query = db.prepareStatement(TABLE)) {
            query.setString(1, name);
            query.setString(2, name);
            long tableBytes = 0;
            long indexBytes = 0;
            long live = 0;
            long dead = 0;
            Map<Long, long[]> runs = new HashMap<>();
            try (ResultSet rows = query.executeQuery()) {
                while (rows.next()) {
                    tableBytes += rows.getLong(2);
                    indexBytes += rows.getLong(3);
                    live += rows.getLong(4);
                    dead += rows.getLong(5);
                    runs.put(rows.getLong(1), new long[] {rows.getLong(6), rows.getLong(7)});
                }
            }
            return new Table(tableBytes, indexBytes, live, dead, runs);
        }
    }

    /**
     * The mount that holds {@code directory}, as /proc/mounts says it (device, type, options): whether the file system
     * trims freed blocks online ({@code discard}) decides what dropping a partition's files costs the commits.
     */
    static String mountOf(Path directory) {
        try {
            Path real = directory.toAbsolutePath();
            while (!Files.exists(real)) {
                real = real.getParent();
            }
            real = real.toRealPath();
            String best = "";
            String found = "unknown";
            for (String line : Files.readAllLines(Path.of("/proc/mounts"))) {
                String[] field = line.split(" ");
                if (field.length > 3 && real.startsWith(field[1]) && field[1].length() >= best.length()) {
                    best = field[1];
                    found = field[0] + " on " + field[1] + " " + field[2] + " " + field[3];
                }
            }
            return found;
        } catch (IOException e) {
            return "mount unknown: " + e.getMessage();
        }
    }
}
