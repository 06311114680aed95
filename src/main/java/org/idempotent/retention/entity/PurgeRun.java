package org.idempotent.retention.entity;

import java.time.Duration;
import java.time.Instant;

/** What one purge of processed_events did. */
public record PurgeRun(
        Result outcome,
        Instant startedAt,
        Duration duration,
        Instant cutoff,
        long rowsDeleted,
        int batches,
        Duration oldestRemainingAge,
        String detail) {

    public enum Result {
        /** Every row older than the cutoff is gone. */
        COMPLETED,
        /** Stopped when the time budget was spent; the next run goes on. */
        BUDGET_SPENT,
        /** Another purge (on this or another instance) holds the lock: this one did nothing. */
        SKIPPED_LOCKED,
        /** The configuration is unsafe or invalid: nothing deleted. */
        REFUSED,
        /** A database error ended the run; rows deleted before it stay deleted. */
        FAILED
    }

    public static PurgeRun withoutWork(Result outcome, Instant startedAt, String detail) {
        return new PurgeRun(outcome, startedAt, Duration.between(startedAt, Instant.now()), null, 0, 0, null, detail);
    }
}
