package org.idempotent.announcement.control;

import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;
import org.idempotent.Resources;
import org.idempotent.announcement.entity.Announcement;
import org.idempotent.announcement.entity.AnnouncementMessage;
import org.idempotent.payment.control.PaymentProcessor;
import org.idempotent.retention.control.AdvisoryLock;
import org.idempotent.retention.control.BatchedDelete;

/**
 * The outbox, table payment_announcements: every statement on it but one. That one writes the rows: the payment's own
 * statement, {@link PaymentProcessor#GUARDED_UPSERT}, which applies a payment and writes its announcement together, so
 * that a payment is announced if and only if it committed, at no extra round trip. The relay claims unsent rows here in
 * id order (an account's commit order), marks them sent once the broker has them, and purges sent rows after their
 * window; the admin API reads an event's rows and marks an account's unsent again. All in autocommit: each statement
 * is a transaction of its own.
 */
@ApplicationScoped
public class Outbox {

    static final String CLAIM = """
            UPDATE payment_announcements SET send_attempts = send_attempts + 1
             WHERE id IN (SELECT id FROM payment_announcements WHERE sent_at IS NULL ORDER BY id LIMIT ?)
            RETURNING id, event_id, account_id, amount_cents, balance_cents, account_sequence, applied_at, generation,
                      send_attempts""";
    static final String MARK_SENT = "UPDATE payment_announcements SET sent_at = clock_timestamp() WHERE id = ANY (?)";
    static final String BACKLOG = """
            SELECT count(*), coalesce(extract(epoch FROM clock_timestamp() - min(applied_at)), 0)
              FROM payment_announcements WHERE sent_at IS NULL""";
    static final String PURGE_BATCH = """
            DELETE FROM payment_announcements
             WHERE ctid = ANY (ARRAY(SELECT ctid FROM payment_announcements
                                      WHERE sent_at < clock_timestamp() - make_interval(secs => ?) LIMIT ?))""";
    /**
     * Unsent again, with a new generation (a new duplicate-detection ID, or the broker would drop the copies as
     * resends). Sent rows only: an unsent one goes out anyway.
     */
    static final String REANNOUNCE = """
            UPDATE payment_announcements SET sent_at = NULL, generation = generation + 1
             WHERE account_id = ? AND account_sequence >= ? AND sent_at IS NOT NULL""";

    static final String OF_EVENT = """
            SELECT event_id, account_id, account_sequence, amount_cents, balance_cents, applied_at, sent_at,
                   send_attempts, generation
              FROM payment_announcements WHERE event_id = ? ORDER BY account_sequence""";
    static final String OLDEST_RETAINED =
            "SELECT min(account_sequence) FROM payment_announcements WHERE account_id = ?";

    /** Advisory lock key of the purge ("annpurge" in ASCII), the same on every instance. */
    static final long PURGE_LOCK = 0x616e6e7075726765L;

    static final int PURGE_BATCH_SIZE = 5000;

    /** Unsent rows, and the age in seconds of the oldest (0 if none). */
    public record Backlog(long unsent, double oldestAgeSeconds) {}

    @Resource(lookup = Resources.DATA_SOURCE)
    DataSource dataSource;

    /** Up to {@code limit} unsent rows in id order, each counted as one more send attempt. */
    public static List<AnnouncementMessage> claim(Connection db, int limit) throws SQLException {
        List<AnnouncementMessage> batch = new ArrayList<>();
        try (PreparedStatement claim = db.prepareStatement(CLAIM)) {
            claim.setInt(1, limit);
            try (ResultSet row = claim.executeQuery()) {
                while (row.next()) {
                    batch.add(new AnnouncementMessage(
                            row.getLong(1),
                            row.getObject(2, UUID.class),
                            row.getString(3),
                            row.getLong(4),
                            row.getLong(5),
                            row.getLong(6),
                            row.getTimestamp(7).toInstant(),
                            row.getInt(8),
                            row.getInt(9)));
                }
            }
        }
        // RETURNING has no order; the id order is the commit order of each account's payments.
        batch.sort(Comparator.comparingLong(AnnouncementMessage::rowId));
        return batch;
    }

    public static void markSent(Connection db, List<AnnouncementMessage> batch) throws SQLException {
        try (PreparedStatement mark = db.prepareStatement(MARK_SENT)) {
            Long[] ids = batch.stream().map(AnnouncementMessage::rowId).toArray(Long[]::new);
            mark.setArray(1, db.createArrayOf("bigint", ids));
            mark.executeUpdate();
        }
    }

    Backlog backlog() throws SQLException {
        try (Connection db = dataSource.getConnection();
                PreparedStatement query = db.prepareStatement(BACKLOG);
                ResultSet row = query.executeQuery()) {
            row.next();
            return new Backlog(row.getLong(1), row.getDouble(2));
        }
    }

    /**
     * Deletes sent rows older than {@code window} in batches, one instance at a time; unsent rows are never deleted.
     *
     * @return the rows deleted; empty if another instance's purge holds the lock
     */
    Optional<Long> purgeSent(Duration window) throws SQLException {
        try (Connection db = dataSource.getConnection()) {
            db.setAutoCommit(true);
            return AdvisoryLock.whileHeld(db, PURGE_LOCK, () -> {
                try (PreparedStatement delete = db.prepareStatement(PURGE_BATCH)) {
                    delete.setDouble(1, window.toSeconds());
                    delete.setInt(2, PURGE_BATCH_SIZE);
                    return BatchedDelete.run(delete::executeUpdate, PURGE_BATCH_SIZE, BatchedDelete.Pacing.FLAT_OUT)
                            .deleted();
                }
            });
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
                    Timestamp sentAt = row.getTimestamp(7);
                    found.add(new Announcement(
                            row.getObject(1, UUID.class),
                            row.getString(2),
                            row.getLong(3),
                            row.getLong(4),
                            row.getLong(5),
                            row.getTimestamp(6).toInstant(),
                            sentAt == null ? Announcement.State.UNSENT : Announcement.State.SENT,
                            sentAt == null ? null : sentAt.toInstant(),
                            row.getInt(8),
                            row.getInt(9)));
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

    /** Marks every retained sent announcement of the account from {@code fromSequence} on for publication again. */
    public int reannounce(String accountId, long fromSequence) throws SQLException {
        try (Connection db = dataSource.getConnection()) {
            db.setAutoCommit(true);
            try (PreparedStatement update = db.prepareStatement(REANNOUNCE)) {
                update.setString(1, accountId);
                update.setLong(2, fromSequence);
                return update.executeUpdate();
            }
        }
    }
}
