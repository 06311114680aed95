package org.idempotent.delivery.entity;

import static java.util.Objects.requireNonNull;

/**
 * Why a message can never be applied. Retrying it cannot help, so it is dead-lettered at once, its reason's name and
 * the detail attached. The reasons any event type may give are {@link Reason}; an event type adds its own as an enum
 * implementing {@link Code}.
 */
public record Rejection(Code reason, String detail) {

    /** A reason's name, as the dead-letter property {@code rejectionReason} shows it. */
    public interface Code {
        String name();
    }

    /** The reasons of the message contract every event type shares, and of the delivery machinery. */
    public enum Reason implements Code {
        UNSUPPORTED_MESSAGE_TYPE,
        EMPTY_BODY,
        BODY_TOO_LARGE,
        INVALID_ENCODING,
        MALFORMED_JSON,
        NOT_A_JSON_OBJECT,
        MISSING_FIELD,
        INVALID_EVENT_ID,
        INVALID_OCCURRED_AT,
        /** A valid event whose ID was already processed with a different payload. */
        PAYLOAD_MISMATCH,
        /** A valid event that would take a value past its column's range, e.g. a balance past bigint (22003). */
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
