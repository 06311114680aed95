package org.idempotent.payment.entity;

import static java.util.Objects.requireNonNull;

/** Thrown when a message cannot be read as a payment event; carries the rejection to dead-letter it with. */
public class RejectedMessage extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final transient Rejection rejection;

    public RejectedMessage(Rejection.Reason reason, String detail) {
        super(reason + ": " + detail, null, false, false);
        this.rejection = new Rejection(reason, detail);
    }

    public Rejection rejection() {
        return requireNonNull(rejection);
    }
}
