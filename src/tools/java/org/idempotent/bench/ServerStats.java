package org.idempotent.bench;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.idempotent.stack.Database;
import org.idempotent.stack.Settings;

/**
 * The cluster's checkpoint and WAL counters at a point (pg_stat_bgwriter, pg_stat_wal): their change over a phase
 * says how many checkpoints ran, who wrote the dirty buffers and how many full-page images the WAL carried. PostgreSQL
 * 15 has no pg_stat_io (16+): these are its nearest. Every numeric column is read, so that a server whose views differ
 * (17 moved the checkpoints to pg_stat_checkpointer) prints "?" rather than fail.
 */
record ServerStats(Map<String, Double> values) {

    static ServerStats take(Settings settings) throws SQLException {
        Map<String, Double> values = new HashMap<>();
        try (Connection db = Database.connect(settings);
                Statement query = db.createStatement()) {
            for (String view : new String[] {"pg_stat_bgwriter", "pg_stat_wal"}) {
                try (ResultSet row = query.executeQuery("SELECT * FROM " + view)) {
                    ResultSetMetaData columns = row.getMetaData();
                    row.next();
                    for (int i = 1; i <= columns.getColumnCount(); i++) {
                        if (row.getObject(i) instanceof Number number) {
                            values.put(columns.getColumnName(i), number.doubleValue());
                        }
                    }
                }
            }
        }
        return new ServerStats(values);
    }

    /** Two lines: the checkpoints and the buffers written, then the WAL, since {@code before}. */
    String since(ServerStats before) {
        return String.format(
                Locale.ROOT,
                "checkpoints: %s timed, %s requested (writing %s ms, syncing %s ms); buffers written by the"
                        + " checkpointer %s, the bgwriter %s, backends %s (backends' own fsyncs %s)%n"
                        + "    WAL: %s records, %s full-page images, %s MB, WAL buffers full %s times,"
                        + " %s writes (%s ms), %s syncs (%s ms)",
                delta(before, "checkpoints_timed"),
                delta(before, "checkpoints_req"),
                delta(before, "checkpoint_write_time"),
                delta(before, "checkpoint_sync_time"),
                delta(before, "buffers_checkpoint"),
                delta(before, "buffers_clean"),
                delta(before, "buffers_backend"),
                delta(before, "buffers_backend_fsync"),
                delta(before, "wal_records"),
                delta(before, "wal_fpi"),
                megabytes(before),
                delta(before, "wal_buffers_full"),
                delta(before, "wal_write"),
                delta(before, "wal_write_time"),
                delta(before, "wal_sync"),
                delta(before, "wal_sync_time"));
    }

    private String delta(ServerStats before, String column) {
        if (!values.containsKey(column) || !before.values.containsKey(column)) {
            return "?";
        }
        return String.format(Locale.ROOT, "%,.0f", values.get(column) - before.values.get(column));
    }

    private String megabytes(ServerStats before) {
        if (!values.containsKey("wal_bytes") || !before.values.containsKey("wal_bytes")) {
            return "?";
        }
        return String.format(
                Locale.ROOT, "%,.1f", (values.get("wal_bytes") - before.values.get("wal_bytes")) / (1 << 20));
    }
}
