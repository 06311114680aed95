package org.idempotent.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.idempotent.stack.Database;
import org.idempotent.stack.Settings;

/**
 * A production past for the volume benchmark, written by PostgreSQL itself (generate_series), through the parent
 * tables so that either dedup mode (DEDUP_PARTITIONING none or id) routes the rows ({@link VolumeSchema}):
 * processed_events spread evenly over the retention window and as many expired days beyond it (half of the rows
 * expired), one announcement per applied payment of the outbox's days, and the accounts.
 */
final class VolumeFill {

    /** Rows per INSERT: progress between them, and no transaction that holds the whole fill's WAL. */
    private static final long CHUNK = 2_000_000;

    /**
     * The records; the %s are the optional columns and their values. An ID is random (v4), or a v7 ID of the record's
     * time (RFC 9562: its Unix milliseconds in the first 6 bytes, version 7 in the high nibble of byte 6, the rest of a
     * v4's random bits and its variant): the fill of the table by ID lands in the days' partitions, as a real past
     * would.
     */
    private static final String DEDUP_ROWS = """
            INSERT INTO processed_events (event_id, processed_at, fingerprint%s)
            SELECT id, t, sha256(uuid_send(id))%s
              FROM (SELECT CASE WHEN %s
                                THEN encode(set_byte(overlay(r PLACING substring(int8send(
                                                    floor(extract(epoch FROM t) * 1000)::bigint) FROM 3) FROM 1),
                                                     6, 112 | (get_byte(r, 6) & 15)), 'hex')::uuid
                                ELSE encode(r, 'hex')::uuid END AS id, t
                      FROM (SELECT uuid_send(gen_random_uuid()) AS r,
                                   CAST(? AS timestamptz) + make_interval(secs => ? * (i - 0.5) / ?) AS t
                              FROM generate_series(CAST(? AS bigint), CAST(? AS bigint)) AS i) AS random) AS r""";

    /** Published rows (xid 1 is below any relay position), as V7 moved the sent rows of V6. */
    private static final String OUTBOX_ROWS = """
            INSERT INTO payment_announcements (xid, event_id, account_id, amount_cents, balance_cents,
                                               account_sequence, applied_at, written_at)
            SELECT '1'::xid8, gen_random_uuid(), 'fill-' || (i % ?), 1 + i % 100000, i, i / ?, t, t
              FROM (SELECT i, CAST(? AS timestamptz) + make_interval(secs => ? * (i - 0.5) / ?) AS t
                      FROM generate_series(CAST(? AS bigint), CAST(? AS bigint)) AS i) AS r""";

    private static final String ACCOUNTS = """
            INSERT INTO accounts (id, balance_cents, last_event_id, updated_at, sequence)
            SELECT 'fill-' || i, 1 + i % 1000000, gen_random_uuid(), now(), 1 FROM generate_series(0, ? - 1) AS i""";

    private final Settings settings;
    private final boolean timeOrdered;
    private final int windowDays;
    private final int outboxDays;
    /** The accounts the first fill made, whose announcements the outbox's rows are. */
    private long accounts;

    /**
     * Where the expired half ends: the start of the UTC day {@code RETENTION_DAYS} ago. Every record before it is past
     * the window in either layout: by its time in the unpartitioned table, by its whole day in the table by ID (whose
     * purge keeps a day until the window has passed its end). Fixed when the benchmark starts, so that the expired rows
     * of both fills are the same ones however long the run takes.
     */
    private final Instant expiredBefore;

    /** @param timeOrdered whether the records carry v7 IDs of their time, else random v4 IDs */
    VolumeFill(Settings settings, boolean timeOrdered) {
        this.settings = settings;
        this.timeOrdered = timeOrdered;
        this.windowDays = settings.getInt("RETENTION_DAYS");
        this.outboxDays = settings.getInt("ANNOUNCEMENT_RETENTION_DAYS");
        this.expiredBefore = LocalDate.now(ZoneOffset.UTC)
                .minusDays(windowDays)
                .atStartOfDay(ZoneOffset.UTC)
                .toInstant();
    }

    int windowDays() {
        return windowDays;
    }

    /**
     * The first fill into empty tables: {@code rows} dedup records over twice the window, the outbox's share of them
     * (its own, shorter retention) and {@code accounts}. The tables' indexes are dropped for it and built afterwards
     * from their own definitions (pg_get_indexdef), as a bulk load is done: the same indexes either way, built in
     * one pass each instead of 20,000,000 random insertions.
     */
    void past(long rows, long accounts) throws SQLException {
        this.accounts = accounts;
        Instant now = Instant.now();
        long outboxRows = rows / (2L * windowDays) * outboxDays;
        try (Connection db = Database.connect(settings)) {
            List<String> rebuild = new ArrayList<>();
            for (String table : List.of("processed_events", "payment_announcements", "accounts")) {
                rebuild.addAll(VolumeSchema.dropIndexes(db, table));
            }
            long start = System.nanoTime();
            // Half before the boundary (a window's worth of expired days), half from it to now.
            dedupRows(db, expiredBefore.minus(Duration.ofDays(windowDays)), Duration.ofDays(windowDays), rows / 2);
            dedupRows(db, expiredBefore, Duration.between(expiredBefore, now), rows - rows / 2);
            VolumeSchema.outboxPartitions(db, now.minus(Duration.ofDays(outboxDays)), now);
            outboxRows(db, now.minus(Duration.ofDays(outboxDays)), Duration.ofDays(outboxDays), outboxRows);
            try (PreparedStatement fill = db.prepareStatement(ACCOUNTS)) {
                fill.setLong(1, accounts);
                fill.executeUpdate();
            }
            System.out.printf(
                    Locale.ROOT,
                    "  filled %,d dedup records (half before %s, the UTC day %d days ago), %,d announcements (%d"
                            + " days), %,d accounts in %.0f s%n",
                    rows,
                    expiredBefore,
                    windowDays,
                    outboxRows,
                    outboxDays,
                    accounts,
                    seconds(start));
            start = System.nanoTime();
            try (Statement sql = db.createStatement()) {
                for (String index : rebuild) {
                    sql.execute(index);
                }
            }
            System.out.printf(Locale.ROOT, "  indexes built in %.0f s%n", seconds(start));
            start = System.nanoTime();
            vacuumAnalyze(db);
            System.out.printf(Locale.ROOT, "  VACUUM ANALYZE of the three tables in %.0f s%n", seconds(start));
        }
    }

    /**
     * A second window's expired records, {@code rows} of them spread over the window beyond the retention window, into
     * the table as it is after a purge, its indexes in place: the space a purge freed is there to be reused.
     */
    void expiredWindow(long rows) throws SQLException {
        long start = System.nanoTime();
        try (Connection db = Database.connect(settings)) {
            dedupRows(db, expiredBefore.minus(Duration.ofDays(windowDays)), Duration.ofDays(windowDays), rows);
        }
        System.out.printf(
                Locale.ROOT, "  filled %,d expired dedup records (indexes in place) in %.0f s%n", rows, seconds(start));
        expiredOutboxDay(rows / windowDays);
    }

    /**
     * A day of the outbox past its window, {@code rows} published announcements in a partition of their own, closed
     * below any relay position: the outbox's upkeep drops it whole, so that the drop happens inside a measured window.
     */
    private void expiredOutboxDay(long rows) throws SQLException {
        LocalDate day = LocalDate.now(ZoneOffset.UTC).minusDays(outboxDays + 1L);
        try (Connection db = Database.connect(settings)) {
            Instant from = day.atStartOfDay(ZoneOffset.UTC).toInstant();
            VolumeSchema.outboxPartitions(db, from, from);
            outboxRows(db, from, Duration.ofDays(1), rows);
            try (PreparedStatement close =
                    db.prepareStatement("UPDATE announcement_partitions SET closing_xid = '1' WHERE day = ?")) {
                close.setObject(1, day);
                close.executeUpdate();
            }
        }
    }

    /** {@code rows} published announcements written from {@code from} over {@code span}, to the filled accounts. */
    private void outboxRows(Connection db, Instant from, Duration span, long rows) throws SQLException {
        chunked("payment_announcements", rows, (first, last) -> {
            try (PreparedStatement fill = db.prepareStatement(OUTBOX_ROWS)) {
                fill.setLong(1, accounts);
                fill.setLong(2, accounts);
                fill.setObject(3, OffsetDateTime.ofInstant(from, ZoneOffset.UTC));
                fill.setDouble(4, span.toSeconds());
                fill.setLong(5, rows);
                fill.setLong(6, first);
                fill.setLong(7, last);
                fill.executeUpdate();
            }
        });
    }

    Instant expiredBefore() {
        return expiredBefore;
    }

    /** The filled expired records left: 0 once the purge has done its work, in either layout. */
    long expiredLeft() throws SQLException {
        String older = "SELECT count(*) FROM processed_events WHERE processed_at < ?";
        try (Connection db = Database.connect(settings);
                PreparedStatement count = db.prepareStatement(older)) {
            count.setObject(1, OffsetDateTime.ofInstant(expiredBefore, ZoneOffset.UTC));
            try (ResultSet row = count.executeQuery()) {
                row.next();
                return row.getLong(1);
            }
        }
    }

    private void dedupRows(Connection db, Instant oldest, Duration span, long rows) throws SQLException {
        VolumeSchema.dedupPartitions(db, oldest, oldest.plus(span));
        String columns = "";
        String values = "";
        if (VolumeSchema.hasColumn(db, "id_version")) {
            columns += ", id_version";
            values += ", get_byte(uuid_send(id), 6) >> 4";
        }
        String sql = DEDUP_ROWS.formatted(columns, values, timeOrdered);
        chunked("processed_events", rows, (from, to) -> {
            try (PreparedStatement fill = db.prepareStatement(sql)) {
                fill.setObject(1, OffsetDateTime.ofInstant(oldest, ZoneOffset.UTC));
                fill.setDouble(2, span.toSeconds());
                fill.setLong(3, rows);
                fill.setLong(4, from);
                fill.setLong(5, to);
                fill.executeUpdate();
            }
        });
    }

    private static void vacuumAnalyze(Connection db) throws SQLException {
        try (Statement sql = db.createStatement()) {
            sql.execute("VACUUM ANALYZE processed_events, payment_announcements, accounts");
        }
    }

    private interface Range {
        void fill(long from, long to) throws SQLException;
    }

    /** Rows 1..{@code rows} in chunks, with the progress printed. */
    private static void chunked(String table, long rows, Range range) throws SQLException {
        long start = System.nanoTime();
        for (long from = 1; from <= rows; from += CHUNK) {
            long to = Math.min(rows, from + CHUNK - 1);
            range.fill(from, to);
            System.out.printf(Locale.ROOT, "    %s: %,d of %,d rows, %.0f s%n", table, to, rows, seconds(start));
        }
    }

    private static double seconds(long start) {
        return (System.nanoTime() - start) / 1e9;
    }
}
