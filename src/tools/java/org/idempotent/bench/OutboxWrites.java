package org.idempotent.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.idempotent.stack.Database;
import org.idempotent.stack.Settings;

/**
 * What the outbox wrote in a pass, per payment applied (--outbox-writes): the row versions PostgreSQL's
 * pg_stat_user_tables counts as inserted, updated (HOT updates among them) and deleted in payment_announcements and
 * every relation named payment_announcements_* (the day partitions and the default one since V7; V6's outbox is the
 * one unpartitioned table, each row inserted, then updated by its relay's claim and its mark), between a snapshot
 * before the pass and one after it; and the writes to the relay's position (announcement_relay, V7), the price of
 * writing no row twice. Counted, not timed: a pass's CPU figures are taken before any of this runs.
 *
 * <p>The counts are PostgreSQL's cumulative statistics, which each backend keeps to itself and adds to shared memory
 * at most once a second, at the end of a transaction. A backend that goes idle within a second of its last flush keeps
 * its counts for PGSTAT_IDLE_INTERVAL (10 s, pgstat.c of PostgreSQL 15), and pg_stat_force_next_flush() reaches only
 * the backend that calls it: a pool's connection that committed the pass's last payments shows them up to 10 s after
 * the pass. So the snapshot after a pass is read no sooner than {@link #FLUSHED} after its end, and once the sums have
 * stood still for {@link #STILL}.
 */
final class OutboxWrites {

    /** Every backend idle since the pass's end has flushed by then: PGSTAT_IDLE_INTERVAL and a margin. */
    private static final Duration FLUSHED = Duration.ofSeconds(11);

    private static final Duration STILL = Duration.ofSeconds(2);
    /** A flush that met a locked entry is retried 10 s later: past this the reading is taken as it is, and said so. */
    private static final Duration GIVE_UP = Duration.ofSeconds(30);

    private static final Duration POLL = Duration.ofMillis(500);

    private static final String OUTBOX = "payment_announcements";

    private static final String CURSOR = "announcement_relay";

    private static final String QUERY =
            "SELECT relid, relname, n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_user_tables"
                    + " WHERE relname IN (?, ?) OR starts_with(relname::text, ?)";

    /** Per relation (by oid, as a partition may come or go): inserted, updated, deleted so far. */
    record Snapshot(Map<Long, long[]> outbox, Map<Long, long[]> cursor) {

        /** The outbox's three sums. */
        long[] outboxSums() {
            return outbox.values().stream().reduce(new long[3], (a, b) ->
                    new long[] {a[0] + b[0], a[1] + b[1], a[2] + b[2]});
        }
    }

    /**
     * A pass's writes: row versions of the outbox, writes of any kind to the relay's position ({@code cursor}; -1: the
     * schema has no announcement_relay, V6), and the payments the pass applied (the set's distinct events).
     */
    record Writes(long inserted, long updated, long deleted, long cursor, long payments) {

        double insertedPerPayment() {
            return (double) inserted / payments;
        }

        double updatedPerPayment() {
            return (double) updated / payments;
        }

        double deletedPerPayment() {
            return (double) deleted / payments;
        }

        /** NaN without a position table. */
        double cursorPerPayment() {
            return cursor < 0 ? Double.NaN : (double) cursor / payments;
        }
    }

    private final Settings settings;
    /** The snapshot before the pass under way; null: none started since the last was counted. */
    private Snapshot before;

    OutboxWrites(Settings settings) {
        this.settings = settings;
    }

    /**
     * Before a pass, while nothing consumes (before the consumer's JVM starts, or before the paused queue resumes).
     * The snapshot after the last pass is read 11 s after it, so this one holds all of that pass's counts.
     */
    void passStarts() throws SQLException {
        try (Connection db = Database.connect(settings)) {
            before = take(db);
        }
    }

    /**
     * The writes since {@link #passStarts} of a pass that ended at {@code endNanos} (System.nanoTime()) and applied
     * {@code payments}, printed; null if no pass started since the last was counted (a paced warm-up, say).
     */
    Writes passEnded(long endNanos, long payments) throws SQLException, InterruptedException {
        if (before == null) {
            return null;
        }
        Snapshot after = settled(endNanos);
        long[] outbox = since(after.outbox(), before.outbox());
        long[] cursor = since(after.cursor(), before.cursor());
        Writes writes = new Writes(
                outbox[0],
                outbox[1],
                outbox[2],
                after.cursor().isEmpty() ? -1 : cursor[0] + cursor[1] + cursor[2],
                payments);
        before = null;
        System.out.printf(Locale.ROOT, "    Outbox per payment: %s%n", describe(writes));
        return writes;
    }

    /**
     * The relations' counts since the snapshot before, summed: one made during the pass (a day's partition) counts
     * from 0; one dropped during it (a day past the retention window, not within a pass) is not counted.
     */
    private static long[] since(Map<Long, long[]> after, Map<Long, long[]> before) {
        long[] sums = new long[3];
        after.forEach((relation, counts) -> {
            long[] from = before.getOrDefault(relation, new long[3]);
            for (int i = 0; i < 3; i++) {
                sums[i] += counts[i] - from[i];
            }
        });
        return sums;
    }

    static String describe(Writes writes) {
        return String.format(
                Locale.ROOT,
                "%.2f inserted, %.2f updated, %.2f deleted row versions; relay cursor: %s",
                writes.insertedPerPayment(),
                writes.updatedPerPayment(),
                writes.deletedPerPayment(),
                writes.cursor() < 0
                        ? "none (no " + CURSOR + ")"
                        : String.format(
                                Locale.ROOT,
                                "%.3f writes per payment (%d in the pass)",
                                writes.cursorPerPayment(),
                                writes.cursor()));
    }

    /** The snapshot once every backend has flushed what it counted up to {@code endNanos}. */
    private Snapshot settled(long endNanos) throws SQLException, InterruptedException {
        try (Connection db = Database.connect(settings)) {
            Snapshot last = take(db);
            long stillSince = System.nanoTime();
            while (true) {
                long now = System.nanoTime();
                if (now - endNanos >= FLUSHED.toNanos() && now - stillSince >= STILL.toNanos()) {
                    return last;
                }
                if (now - endNanos >= GIVE_UP.toNanos()) {
                    System.out.printf(
                            "    (the outbox's counts still moved %d s after the pass: read as they were)%n",
                            GIVE_UP.toSeconds());
                    return last;
                }
                Thread.sleep(POLL.toMillis());
                // In autocommit: within a transaction PostgreSQL answers the statistics it read first.
                Snapshot next = take(db);
                // Only the outbox's sums: the relay may write its position now and then while idle.
                if (!Arrays.equals(next.outboxSums(), last.outboxSums())) {
                    stillSince = System.nanoTime();
                }
                last = next;
            }
        }
    }

    private static Snapshot take(Connection db) throws SQLException {
        Map<Long, long[]> outbox = new HashMap<>();
        Map<Long, long[]> cursor = new HashMap<>();
        try (PreparedStatement query = db.prepareStatement(QUERY)) {
            query.setString(1, OUTBOX);
            query.setString(2, CURSOR);
            query.setString(3, OUTBOX + "_");
            try (ResultSet row = query.executeQuery()) {
                while (row.next()) {
                    long[] counts = {row.getLong(3), row.getLong(4), row.getLong(5)};
                    (row.getString(2).equals(CURSOR) ? cursor : outbox).put(row.getLong(1), counts);
                }
            }
        }
        return new Snapshot(outbox, cursor);
    }

    /**
     * Each variant's figures at each concurrency over its counted passes, medians: with --repeat, the product and
     * the compared variants ran in every round.
     */
    static void printMedians(List<Result> results) {
        Map<String, List<Writes>> passes = new LinkedHashMap<>();
        for (Result r : results) {
            if (r.outbox() != null) {
                passes.computeIfAbsent(
                                String.format(Locale.ROOT, "%-40s N=%-3d", r.variant(), r.concurrency()),
                                k -> new ArrayList<>())
                        .add(r.outbox());
            }
        }
        if (passes.isEmpty()) {
            return;
        }
        System.out.printf("%nOutbox row versions per payment applied (pg_stat_user_tables; medians of the passes)%n");
        passes.forEach((variant, writes) -> {
            double cursor = Report.median(writes.stream().mapToDouble(Writes::cursorPerPayment));
            System.out.printf(
                    Locale.ROOT,
                    "  %s %.2f inserted, %.2f updated, %.2f deleted; relay cursor %s (%d pass%s)%n",
                    variant,
                    Report.median(writes.stream().mapToDouble(Writes::insertedPerPayment)),
                    Report.median(writes.stream().mapToDouble(Writes::updatedPerPayment)),
                    Report.median(writes.stream().mapToDouble(Writes::deletedPerPayment)),
                    Double.isNaN(cursor) ? "none" : String.format(Locale.ROOT, "%.3f writes", cursor),
                    writes.size(),
                    writes.size() == 1 ? "" : "es");
        });
    }
}
