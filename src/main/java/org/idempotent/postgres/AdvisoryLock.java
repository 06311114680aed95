package org.idempotent.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;

/**
 * One holder at a time across every instance that shares the database: a PostgreSQL session-level advisory lock, taken
 * without waiting and held by the connection across the autocommitted statements of the work. The dedup purge, the
 * outbox's purge and the relay's pass each run under a key of their own. A connection that dies releases its lock with
 * its session, so a crashed holder never blocks the others.
 */
public final class AdvisoryLock {

    /** Work done with the lock held. */
    @FunctionalInterface
    public interface Work<T> {
        T run() throws SQLException;
    }

    static final String TRY_LOCK = "SELECT pg_try_advisory_lock(?)";
    static final String UNLOCK = "SELECT pg_advisory_unlock(?)";

    private AdvisoryLock() {}

    /**
     * @return what the work returned; empty if another session holds the lock (nothing was done)
     */
    public static <T> Optional<T> whileHeld(Connection db, long key, Work<T> work) throws SQLException {
        if (!answer(db.prepareStatement(TRY_LOCK), key)) {
            return Optional.empty();
        }
        try {
            return Optional.of(work.run());
        } finally {
            answer(db.prepareStatement(UNLOCK), key);
        }
    }

    /** Runs the statement on the key, closes it, and answers its boolean. */
    private static boolean answer(PreparedStatement statement, long key) throws SQLException {
        try (statement) {
            statement.setLong(1, key);
            try (ResultSet row = statement.executeQuery()) {
                return row.next() && row.getBoolean(1);
            }
        }
    }
}
