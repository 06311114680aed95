package org.idempotent.refund.entity;

import org.idempotent.delivery.entity.Rejection;

/** The reasons only a refund gives, beside those every event type shares ({@link Rejection.Reason}). */
public enum RefundRejection implements Rejection.Code {
    /** paymentEventId is not a canonical UUID, or is the refund's own eventId. */
    INVALID_PAYMENT_EVENT_ID,
    INVALID_AMOUNT,
    /** No payment of that ID was applied within the refund's delivery budget (DEFERRED_DELIVERIES_MAX). */
    UNKNOWN_PAYMENT,
    /** The refunds of the payment would exceed its amount: over-refunded, or refunded in full already. */
    REFUND_EXCEEDS_PAYMENT
}
