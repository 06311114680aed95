package org.idempotent.retention.control;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import org.idempotent.postgres.LockRetries;

/**
 * Detaches one expired partition of the dedup table by its layout's function, which waits 40 ms at most for its lock
 * (V13__maintenance_short_locks.sql), retried after jittered rests ({@link LockRetries}): the consumers' inserts queue
 * behind a detach only while it waits.
 */
final class PartitionDetach {

    private PartitionDetach() {}

    /**
     * @param detach the layout's detach call, closed here: the partition's name is parameter 1, the window in seconds
     *     parameter 2; it answers the partition's rows
     * @return the rows of the partition detached; empty if its lock was refused every time
     */
    static Optional<Long> rows(PreparedStatement detach, String partition, Duration window) throws SQLException {
        try (detach) {
            detach.setString(1, partition);
            detach.setDouble(2, window.toSeconds());
            return LockRetries.attempt(() -> {
                try (ResultSet counted = detach.executeQuery()) {
                    counted.next();
                    return counted.getLong(1);
                }
            });
        }
    }
}
