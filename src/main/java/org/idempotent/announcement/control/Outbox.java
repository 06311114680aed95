package org.idempotent.announcement.control;

import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;
import org.idempotent.Resources;
import org.idempotent.announcement.entity.Announcement;
import org.idempotent.payment.control.Payments;

/**
 * The outbox, table payment_announcements: every statement on it but the relay's ({@link OutboxCursor}) and one.
 * That one writes the rows: the payment's own statement, {@link Payments#GUARDED_UPSERT}, which applies a
 * payment and writes its announcement together, so that a payment is announced if and only if it committed, at no
 * extra round trip. Nothing updates or deletes a row after that (but a resend's count, after a relay stopped
 * mid-window): the relay keeps one position, and retention drops whole days ({@link OutboxDays}). Here: the
 * backlog, the admin API's reads and re-announcement. All in autocommit: each statement is a
 * transaction of its own.
 */
@ApplicationScoped
public class Outbox {

    static final String BACKLOG = """
            SELECT count(*), coalesce(extract(epoch FROM clock_timestamp() - min(written_at)), 0)
              FROM unsent_announcements""";
    /**
     * Copies of the account's latest announcements from a sequence number on, with a new generation (a new
     * duplicate-detection ID, or the broker would drop them as resends), written under the account's row lock like a
     * payment's, so that they go out after everything the account committed before and before what comes after.
     */
    static final String REANNOUNCE = """
            WITH locked AS (SELECT id FROM accounts WHERE id = ? FOR UPDATE),
            latest AS (
                SELECT DISTINCT ON (a.account_sequence) a.*
                  FROM payment_announcements a, locked
                 WHERE a.account_id = locked.id AND a.account_sequence >= ?
                 ORDER BY a.account_sequence, a.generation DESC)
            INSERT INTO payment_announcements (id, event_id, account_id, amount_cents, balance_cents, account_sequence,
                                               applied_at, generation, kind)
            SELECT nextval('announcement_ids'), event_id, account_id, amount_cents, balance_cents, account_sequence,
                   applied_at, generation + 1, kind
              FROM (SELECT * FROM latest ORDER BY account_sequence) AS in_order""";

    /** The oldest transaction holding the horizon: its backend's pid, user, application and state. */
    static final String HORIZON_HOLDER = """
            SELECT pid, usename, application_name, state FROM pg_stat_activity
             WHERE backend_xid IS NOT NULL ORDER BY age(backend_xid) DESC LIMIT 1""";

    static final String OF_EVENT = """
            SELECT a.event_id, a.account_id, a.account_sequence, a.amount_cents, a.balance_cents, a.applied_at,
                   a.xid < r.position, a.resends, a.generation, a.kind
              FROM payment_announcements a, announcement_relay r
             WHERE a.event_id = ? ORDER BY a.id""";
    static final String OLDEST_RETAINED =
            "SELECT min(account_sequence) FROM payment_announcements WHERE account_id = ?";

    /** Unsent rows, and the age in seconds of the oldest (0 if none). */
    public record Backlog(long unsent, double oldestAgeSeconds) {}

    @Resource(lookup = Resources.DATA_SOURCE)
    DataSource dataSource;

    public Backlog backlog() throws SQLException {
        try (Connection db = dataSource.getConnection();
                PreparedStatement query = db.prepareStatement(BACKLOG);
                ResultSet row = query.executeQuery()) {
            row.next();
            return new Backlog(row.getLong(1), row.getDouble(2));
        }
    }

    /**
     * The session whose transaction holds the horizon, as PostgreSQL shows it to this role (another role's state
     * reads null), for the operator who finds announcements delayed; empty if no transaction holds one.
     */
    public Optional<String> horizonHolder() throws SQLException {
        try (Connection db = dataSource.getConnection();
                PreparedStatement query = db.prepareStatement(HORIZON_HOLDER);
                ResultSet row = query.executeQuery()) {
            if (!row.next()) {
                return Optional.empty();
            }
            return Optional.of("pid " + row.getInt(1) + " (user " + row.getString(2) + ", application '"
                    + row.getString(3) + "', " + (row.getString(4) == null ? "state not shown" : row.getString(4))
                    + ")");
        }
    }

    /** Usually one; more if the event was forgotten and applied again (each application is announced). */
    public List<Announcement> ofEvent(UUID eventId) throws SQLException {
        List<Announcement> found = new ArrayList<>();
        try (Connection db = dataSource.getConnection();
                PreparedStatement query = db.prepareStatement(OF_EVENT)) {
            query.setObject(1, eventId);
            try (ResultSet row = query.executeQuery()) {
                while (row.next()) {
                    boolean sent = row.getBoolean(7);
                    found.add(new Announcement(
                            row.getObject(1, UUID.class),
                            row.getString(2),
                            row.getLong(3),
                            row.getLong(4),
                            row.getLong(5),
                            row.getTimestamp(6).toInstant(),
                            sent ? Announcement.State.SENT : Announcement.State.UNSENT,
                            (sent ? 1 : 0) + row.getInt(8),
                            row.getInt(9),
                            row.getString(10)));
                }
            }
        }
        return found;
    }

    /** The lowest sequence number of the account still in the outbox (older rows are purged); empty if none is. */
    public Optional<Long> oldestRetained(String accountId) throws SQLException {
        try (Connection db = dataSource.getConnection();
                PreparedStatement query = db.prepareStatement(OLDEST_RETAINED)) {
            query.setString(1, accountId);
            try (ResultSet row = query.executeQuery()) {
                row.next();
                long oldest = row.getLong(1);
                return row.wasNull() ? Optional.empty() : Optional.of(oldest);
            }
        }
    }

    /** Writes copies of the account's retained announcements from {@code fromSequence} on, for publication again. */
    public int reannounce(String accountId, long fromSequence) throws SQLException {
        try (Connection db = dataSource.getConnection()) {
            db.setAutoCommit(true);
            try (PreparedStatement insert = db.prepareStatement(REANNOUNCE)) {
                insert.setString(1, accountId);
                insert.setLong(2, fromSequence);
                return insert.executeUpdate();
            }
        }
    }
}
