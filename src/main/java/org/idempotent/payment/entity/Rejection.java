package org.idempotent.payment.entity;

import static java.util.Objects.requireNonNull;

/** Why a message can never become a payment. Retrying it cannot help, so it is dead-lettered at once. */
public record Rejection(Reason reason, String detail) {

    public enum Reason {
        UNSUPPORTED_MESSAGE_TYPE,
        EMPTY_BODY,
        BODY_TOO_LARGE,
        INVALID_ENCODING,
        MALFORMED_JSON,
        NOT_A_JSON_OBJECT,
        MISSING_FIELD,
        INVALID_EVENT_ID,
        INVALID_ACCOUNT_ID,
        INVALID_AMOUNT,
        INVALID_OCCURRED_AT,
        /** A valid event whose ID was already processed with a different payload. */
        PAYLOAD_MISMATCH,
        /** A valid event that would take the account's balance past the range of bigint (SQLState 22003). */
        AMOUNT_OUT_OF_RANGE,
        /** A valid event the database refuses on every attempt: any other data exception or integrity violation. */
        REFUSED_BY_DATABASE,
        /**
         * Older than the dedup horizon and without a dedup record: perhaps a duplicate whose record retention has
         * purged. Quarantined, not applied, until an administrator releases it.
         */
        STALE
    }

    public Rejection {
        requireNonNull(reason, "reason");
        requireNonNull(detail, "detail");
    }

    @Override
    public String toString() {
        return reason + ": " + detail;
    }
}
