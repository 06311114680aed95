package org.idempotent.payment.entity;

import org.idempotent.delivery.entity.Rejection;

/** The reasons only a payment's fields give, beside those every event type shares ({@link Rejection.Reason}). */
public enum PaymentRejection implements Rejection.Code {
    INVALID_ACCOUNT_ID,
    INVALID_AMOUNT
}
