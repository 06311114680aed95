package org.idempotent.payment.entity;

/** What consuming one message did. */
public enum Outcome {
    /** The payment was applied and the event recorded. */
    APPLIED,
    /** The event was recorded before: nothing applied, the message is acknowledged. */
    DUPLICATE,
    /**
     * The event had no dedup record (for example it was purged or bypassed by a backfill), but the account shows it
     * as the last event applied: the guarded upsert refused to apply it twice.
     */
    ALREADY_APPLIED,
    /**
     * The event ID was processed before with a different payload: a producer reused an ID for another payment.
     * Nothing applied; the message is dead-lettered with both fingerprints.
     */
    CONFLICT,
    /**
     * Older than the dedup horizon and without a dedup record: perhaps a duplicate whose record was purged. Nothing
     * applied; moved to the quarantine queue until an administrator releases it.
     */
    QUARANTINED,
    /** The message is not a valid payment event: dead-lettered with its reason, nothing applied. */
    REJECTED,
    /** A transient failure: rolled back, the broker redelivers it. */
    FAILED
}
