package org.idempotent.delivery.entity;

/** What consuming one message did. */
public enum Outcome {
    /** The event was applied and recorded. */
    APPLIED,
    /** The event was recorded before: nothing applied, the message is acknowledged. */
    DUPLICATE,
    /**
     * The event had no dedup record (for example it was purged or bypassed by a backfill), but the account shows it
     * as the last event applied: the guarded upsert refused to apply it twice.
     */
    ALREADY_APPLIED,
    /**
     * The event ID was processed before with a different payload: a producer reused an ID for another event.
     * Nothing applied; the message is dead-lettered with both fingerprints.
     */
    CONFLICT,
    /**
     * Older than the dedup horizon and without a dedup record: perhaps a duplicate whose record was purged. Nothing
     * applied; moved to the quarantine queue until an administrator releases it.
     */
    QUARANTINED,
    /**
     * The message is not a valid event of its type, or its event can never be applied: dead-lettered with its
     * reason, nothing applied.
     */
    REJECTED,
    /**
     * The event depends on one not applied yet (a refund before its payment): rolled back, and a copy handed to the
     * broker for a later delivery, after a back-off; dead-lettered with the reason once the delivery budget is spent.
     */
    DEFERRED,
    /** A transient failure: rolled back, the broker redelivers it. */
    FAILED
}
