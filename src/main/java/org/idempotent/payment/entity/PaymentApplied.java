package org.idempotent.payment.entity;

import static java.util.Objects.requireNonNull;

import java.util.UUID;

/** Fired once the transaction that applied an event has committed (its announcement is in the outbox by then). */
public record PaymentApplied(UUID eventId, String accountId) {

    public PaymentApplied {
        requireNonNull(eventId, "eventId");
        requireNonNull(accountId, "accountId");
    }
}
