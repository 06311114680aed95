package org.idempotent.stack;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.UUID;

/** What the tests read from, and do behind the back of, the payments database. */
public final class Ledger {

    private final Settings settings;

    public Ledger(Settings settings) {
        this.settings = settings;
    }

    /** The balance of an account, or null if it has no row (no payment was ever applied to it). */
    public Long balance(String account) {
        return single("SELECT balance_cents FROM accounts WHERE id = ?", account);
    }

    public boolean isProcessed(UUID eventId) {
        return single("SELECT 1 FROM processed_events WHERE event_id = ?", eventId) != null;
    }

    public long processedCount(Collection<UUID> eventIds) {
        return single("SELECT count(*) FROM processed_events WHERE event_id = ANY (?)", eventIds.toArray(UUID[]::new));
    }

    /** A backfill or a purge that removed the dedup record of an event. */
    public void forget(UUID eventId) {
        update("DELETE FROM processed_events WHERE event_id = ?", eventId);
    }

    /** Pretends the event was processed this long ago. */
    public void age(UUID eventId, Duration age) {
        update(
                "UPDATE processed_events SET processed_at = now() - make_interval(secs => ?) WHERE event_id = ?",
                (double) age.toSeconds(),
                eventId);
    }

    /** Dedup records of events processed {@code age} ago (give or take a minute), as a busy past would leave. */
    public void insertProcessed(int count, Duration age) {
        update(
                "INSERT INTO processed_events (event_id, processed_at) SELECT gen_random_uuid(), "
                        + "now() - make_interval(secs => ?) - random() * interval '1 minute' FROM generate_series(1, ?)",
                (double) age.toSeconds(),
                count);
    }

    /** Rows whose age lies between {@code youngest} and {@code oldest}. */
    public long processedAged(Duration youngest, Duration oldest) {
        try (Connection db = Database.connect(settings);
                PreparedStatement query = db.prepareStatement(
                        "SELECT count(*) FROM processed_events WHERE processed_at <= now() - make_interval(secs => ?) "
                                + "AND processed_at > now() - make_interval(secs => ?)")) {
            query.setDouble(1, youngest.toSeconds());
            query.setDouble(2, oldest.toSeconds());
            try (ResultSet row = query.executeQuery()) {
                row.next();
                return row.getLong(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The audit rows of the event's forgettings: who, and why, oldest first. */
    public List<String> forgettings(UUID eventId) {
        List<String> rows = new ArrayList<>();
        try (Connection db = Database.connect(settings);
                PreparedStatement query = db.prepareStatement(
                        "SELECT forgotten_by || ': ' || reason FROM forgotten_events WHERE event_id = ? ORDER BY id")) {
            query.setObject(1, eventId);
            try (ResultSet row = query.executeQuery()) {
                while (row.next()) {
                    rows.add(row.getString(1));
                }
            }
            return rows;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Locks the account's row in an open transaction until the returned lock is closed: a consumer that writes to it waits. */
    public AutoCloseable lockAccount(String account) throws SQLException {
        Connection db = Database.connect(settings);
        db.setAutoCommit(false);
        try (PreparedStatement lock = db.prepareStatement("SELECT 1 FROM accounts WHERE id = ? FOR UPDATE")) {
            lock.setString(1, account);
            lock.executeQuery().close();
        }
        return () -> {
            db.rollback();
            db.close();
        };
    }

    /** How many sessions of this database are waiting for a lock right now (a row, or another transaction's key). */
    public long sessionsWaitingForALock() {
        return single(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                        + "AND wait_event_type = 'Lock' AND pid <> ?",
                -1);
    }

    /** Whether some session holds the purge's advisory lock, i.e. a purge is running. */
    public boolean purgeRunning() {
        return single(
                        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND "
                                + "((classid::bigint << 32) | objid::bigint) = ?",
                        0x726574656e74696fL)
                > 0;
    }

    /** Makes the event's releases from quarantine look {@code age} old. */
    public void ageReleases(UUID eventId, Duration age) {
        update(
                "UPDATE released_events SET released_at = now() - make_interval(secs => ?) WHERE event_id = ?",
                (double) age.toSeconds(),
                eventId);
    }

    /** Sets an account's balance directly, creating the account if needed. */
    public void setBalance(String account, long balance) {
        update(
                "INSERT INTO accounts (id, balance_cents, updated_at) VALUES (?, ?, now()) "
                        + "ON CONFLICT (id) DO UPDATE SET balance_cents = EXCLUDED.balance_cents",
                account,
                balance);
    }

    /**
     * A unique key of the kind a later migration might add, on the balances of accounts whose ID starts with
     * {@code prefix}: a payment that gives two of them the same balance violates it (SQLState 23505, not the dedup key).
     */
    public void addUniqueBalanceKey(String name, String prefix) {
        update("CREATE UNIQUE INDEX " + name + " ON accounts (balance_cents) WHERE id LIKE '" + prefix + "%'");
    }

    public void dropIndex(String name) {
        update("DROP INDEX IF EXISTS " + name);
    }

    /** A database fault the consumer cannot fix by itself: the accounts table is gone until {@link #repair()}. */
    public void breakAccountsTable() {
        update("ALTER TABLE accounts RENAME TO accounts_unavailable");
    }

    public void repair() {
        update("ALTER TABLE IF EXISTS accounts_unavailable RENAME TO accounts");
    }

    private Long single(String sql, Object parameter) {
        try (Connection db = Database.connect(settings);
                PreparedStatement query = db.prepareStatement(sql)) {
            bind(db, query, 1, parameter);
            try (ResultSet row = query.executeQuery()) {
                return row.next() ? row.getLong(1) : null;
            }
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    private void update(String sql, Object... parameters) {
        try (Connection db = Database.connect(settings);
                PreparedStatement statement = db.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
                bind(db, statement, i + 1, parameters[i]);
            }
            statement.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    private static void bind(Connection db, PreparedStatement statement, int index, Object value) throws SQLException {
        if (value instanceof UUID[] ids) {
            statement.setArray(index, db.createArrayOf("uuid", ids));
        } else {
            statement.setObject(index, value);
        }
    }
}
