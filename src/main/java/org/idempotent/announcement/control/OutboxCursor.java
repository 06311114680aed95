package org.idempotent.announcement.control;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.idempotent.announcement.entity.AnnouncementMessage;
import org.idempotent.telemetry.TraceContext;

/**
 * The relay's position in the outbox and the windows past it (table announcement_relay, V7__outbox_cursor.sql): how
 * the relay finds what to publish without writing to a row it publishes.
 *
 * <p>The position is a transaction ID: every row written by a transaction below it is published. A window runs from
 * the position to at most the horizon, the oldest transaction still running anywhere in the cluster
 * ({@code pg_snapshot_xmin}): below it every transaction has ended, so no row can appear there any more, and what is
 * there is read whole. A window is published in id order, and ids are drawn under the account's row lock (the
 * payment's statement takes it first), so an account's rows go out in the order they committed.
 *
 * <p>Transaction-ID order is not that order: a transaction takes its ID at its first write, the dedup insert, and
 * may take the account's lock after a later one. So a window ends below any row whose account has an earlier row
 * (by id) at or above the window's end ({@link #BLOCKED}): that earlier row committed first but is not published yet,
 * and the later one waits for it. A long or idle transaction anywhere holds the horizon, and with it every
 * announcement committed after it began; the backlog's gauges show it, and nothing is lost or reordered when it ends.
 *
 * <p>Statements on the relay's connection, in autocommit, under its lock.
 */
public final class OutboxCursor {

    /** Rows per broker transaction. */
    public static final int PAGE_SIZE = 200;

    /** Where the relay stands (see announcement_relay in V7) and the horizon. */
    static final String POSITION = """
            SELECT position::text, window_end::text, sent_through, attempted_through,
                   pg_snapshot_xmin(pg_current_snapshot())::text, pg_snapshot_xmax(pg_current_snapshot())::text
              FROM announcement_relay""";
    /**
     * The lowest transaction ID in the window [position, end) with a row that must wait: an earlier row of its account,
     * in lock order, is at or above the end. Driven from the rows at or above the end, a handful in steady state. And
     * the window's lowest id, where its pages start (not the table's first: the id index's scan starts there), found as
     * in {@link #FIRST_ID}.
     *
     * <p>Every condition on xid is a range with both ends, those rows' upper end the first ID no transaction had yet
     * when the position was read: an earlier row of the account committed before the window's row did, so before
     * then. A range is what the planner estimates as narrow without statistics too (a fresh install's tables, a new
     * day's partition), where a bare lower bound counts as a third of the table, and the rows above the end were read
     * with a sequential scan of every partition on each pass.
     */
    static final String BLOCKED = """
            SELECT min(r.xid)::text,
                   (SELECT min(id + 0) FROM payment_announcements
                     WHERE xid >= CAST(? AS xid8) AND xid < CAST(? AS xid8))
              FROM payment_announcements p
              JOIN payment_announcements r ON r.account_id = p.account_id AND r.id > p.id
             WHERE p.xid >= CAST(? AS xid8) AND p.xid < CAST(? AS xid8)
               AND r.xid >= CAST(? AS xid8) AND r.xid < CAST(? AS xid8)""";

    /** A window being published: any of its rows may have been sent (attempted_through: every id). */
    static final String OPEN_WINDOW = """
            UPDATE announcement_relay
               SET window_end = CAST(? AS xid8), sent_through = 0, attempted_through = 9223372036854775807""";

    static final String PAGE = """
            SELECT id, event_id, account_id, amount_cents, balance_cents, account_sequence, applied_at, generation,
                   resends, kind, trace_parent, trace_state
              FROM payment_announcements
             WHERE xid >= CAST(? AS xid8) AND xid < CAST(? AS xid8) AND id > ?
             ORDER BY id LIMIT ?""";
    /**
     * {@code id + 0}: the window's rows found by xid, not min's usual plan, the id index read from the table's first
     * row until one falls in the window (every published row of the day before it).
     */
    static final String FIRST_ID =
            "SELECT min(id + 0) FROM payment_announcements WHERE xid >= CAST(? AS xid8) AND xid < CAST(? AS xid8)";

    static final String SENT_THROUGH = "UPDATE announcement_relay SET sent_through = ?";
    static final String CLOSE_WINDOW = """
            UPDATE announcement_relay
               SET position = CAST(? AS xid8), window_end = CAST(? AS xid8), sent_through = 0, attempted_through = 0""";
    /** Rows a relay that stopped mid-window may have published: publishing them again is a resend. */
    static final String COUNT_RESENDS = """
            UPDATE payment_announcements SET resends = resends + 1
             WHERE xid >= CAST(? AS xid8) AND xid < CAST(? AS xid8) AND id > ? AND id <= ?""";

    /**
     * The relay's position, the window being published ({@code windowEnd} above the position: left mid-way, with its
     * rows through {@code sentThrough} published and through {@code attemptedThrough} perhaps), the horizon, and the
     * first transaction ID not yet given to any transaction ({@code next}).
     */
    public record Position(
            long position, long windowEnd, long sentThrough, long attemptedThrough, long horizon, long next) {

        boolean windowOpen() {
            return windowEnd > position;
        }
    }

    /** A window's end, and its lowest id (0 if it has no row: nothing to publish). */
    public record Window(long end, long firstId) {}

    /** The rows of a window to publish in order, and whether more may follow it. */
    public record Page(List<AnnouncementMessage> rows, boolean full) {

        long lastId() {
            return rows.get(rows.size() - 1).rowId();
        }
    }

    private OutboxCursor() {}

    public static Position position(Connection db) throws SQLException {
        try (PreparedStatement query = db.prepareStatement(POSITION);
                ResultSet row = query.executeQuery()) {
            if (!row.next()) {
                throw new SQLException("announcement_relay has no row: the V7 migration did not run");
            }
            return new Position(
                    Long.parseLong(row.getString(1)),
                    Long.parseLong(row.getString(2)),
                    row.getLong(3),
                    row.getLong(4),
                    Long.parseLong(row.getString(5)),
                    Long.parseLong(row.getString(6)));
        }
    }

    /**
     * The next window from the position: up to the horizon, lowered below every row that must wait for an earlier row
     * of its account (repeated, as lowering it can make another row wait); empty if no row can go yet.
     */
    public static Window window(Connection db, Position at) throws SQLException {
        long end = at.horizon();
        long firstId = 0;
        try (PreparedStatement blocked = db.prepareStatement(BLOCKED)) {
            while (end > at.position()) {
                String[] bounds = {Long.toString(at.position()), Long.toString(end)};
                blocked.setString(1, bounds[0]);
                blocked.setString(2, bounds[1]);
                blocked.setString(3, bounds[1]);
                blocked.setString(4, Long.toString(at.next()));
                blocked.setString(5, bounds[0]);
                blocked.setString(6, bounds[1]);
                try (ResultSet row = blocked.executeQuery()) {
                    row.next();
                    if (firstId == 0) {
                        firstId = row.getLong(2);
                        if (row.wasNull()) {
                            return new Window(end, 0);
                        }
                    }
                    String waiting = row.getString(1);
                    if (waiting == null) {
                        return new Window(end, firstId);
                    }
                    end = Long.parseLong(waiting);
                }
            }
        }
        return new Window(at.position(), 0);
    }

    /** The lowest id in the window [{@code from}, {@code end}), 0 if none. */
    public static long firstId(Connection db, long from, long end) throws SQLException {
        try (PreparedStatement query = db.prepareStatement(FIRST_ID)) {
            query.setString(1, Long.toString(from));
            query.setString(2, Long.toString(end));
            try (ResultSet row = query.executeQuery()) {
                row.next();
                return row.getLong(1);
            }
        }
    }

    /** Records the window as being published, before its first page goes out. */
    public static void open(Connection db, long end) throws SQLException {
        try (PreparedStatement update = db.prepareStatement(OPEN_WINDOW)) {
            update.setString(1, Long.toString(end));
            update.executeUpdate();
        }
    }

    /**
     * Up to {@code limit} rows of the window [{@code from}, {@code end}) after row {@code after}, in id order; rows a
     * stopped relay may have published already ({@code attemptedThrough}) are counted as resends first.
     */
    public static Page page(Connection db, long from, long end, long after, long attemptedThrough, int limit)
            throws SQLException {
        if (attemptedThrough > after) {
            try (PreparedStatement resends = db.prepareStatement(COUNT_RESENDS)) {
                resends.setString(1, Long.toString(from));
                resends.setString(2, Long.toString(end));
                resends.setLong(3, after);
                resends.setLong(4, attemptedThrough);
                resends.executeUpdate();
            }
        }
        List<AnnouncementMessage> rows = new ArrayList<>();
        try (PreparedStatement page = db.prepareStatement(PAGE)) {
            page.setString(1, Long.toString(from));
            page.setString(2, Long.toString(end));
            page.setLong(3, after);
            page.setInt(4, limit);
            try (ResultSet row = page.executeQuery()) {
                while (row.next()) {
                    rows.add(new AnnouncementMessage(
                            row.getLong(1),
                            row.getObject(2, UUID.class),
                            row.getString(3),
                            row.getLong(4),
                            row.getLong(5),
                            row.getLong(6),
                            row.getTimestamp(7).toInstant(),
                            row.getInt(8),
                            row.getInt(9) + 1,
                            row.getString(10),
                            TraceContext.of(row.getString(11), row.getString(12))));
                }
            }
        }
        return new Page(rows, rows.size() == limit);
    }

    /** Records a page of a window that has more as published. */
    public static void sentThrough(Connection db, long id) throws SQLException {
        try (PreparedStatement update = db.prepareStatement(SENT_THROUGH)) {
            update.setLong(1, id);
            update.executeUpdate();
        }
    }

    /** Moves the position to the window's end: everything below it is published. */
    public static void close(Connection db, long end) throws SQLException {
        try (PreparedStatement update = db.prepareStatement(CLOSE_WINDOW)) {
            update.setString(1, Long.toString(end));
            update.setString(2, Long.toString(end));
            update.executeUpdate();
        }
    }
}
