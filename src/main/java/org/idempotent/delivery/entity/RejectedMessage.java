package org.idempotent.delivery.entity;

import static java.util.Objects.requireNonNull;

import jakarta.ejb.ApplicationException;

/**
 * Thrown when a message can never be applied: it cannot be read as an event of its type, or the database refuses it
 * on every attempt. Carries the rejection to dead-letter it with. An application exception, so that a transaction it
 * leaves is rolled back and the exception reaches the consumer as it was thrown.
 */
@ApplicationException(rollback = true)
public class RejectedMessage extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final transient Rejection rejection;

    public RejectedMessage(Rejection.Code reason, String detail) {
        this(new Rejection(reason, detail));
    }

    public RejectedMessage(Rejection rejection) {
        super(rejection.toString(), null, false, false);
        this.rejection = rejection;
    }

    public Rejection rejection() {
        return requireNonNull(rejection);
    }
}
