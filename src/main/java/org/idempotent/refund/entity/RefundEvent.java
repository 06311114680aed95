package org.idempotent.refund.entity;

import static java.util.Objects.requireNonNull;

import java.time.Instant;
import java.util.UUID;
import org.idempotent.delivery.entity.DeliveredEvent;

/**
 * One refund as the producer sent it: {@code amountCents} of the payment {@code paymentEventId} given back to that
 * payment's account. {@code eventId} is the refund's own, assigned once by its producer and the same on every
 * redelivery; {@code occurredAt} is optional, as for a payment.
 */
public record RefundEvent(UUID eventId, UUID paymentEventId, long amountCents, Instant occurredAt)
        implements DeliveredEvent {

    public static final long MIN_AMOUNT_CENTS = 1;
    /** No refund exceeds a payment, and no payment exceeds this (PaymentEvent.MAX_AMOUNT_CENTS). */
    public static final long MAX_AMOUNT_CENTS = 1_000_000_000_000L;

    public RefundEvent {
        requireNonNull(eventId, "eventId");
        requireNonNull(paymentEventId, "paymentEventId");
        if (eventId.equals(paymentEventId)) {
            throw new IllegalArgumentException("a refund's eventId is its own, not its payment's");
        }
        if (amountCents < MIN_AMOUNT_CENTS || amountCents > MAX_AMOUNT_CENTS) {
            throw new IllegalArgumentException(
                    "amountCents must be within " + MIN_AMOUNT_CENTS + ".." + MAX_AMOUNT_CENTS);
        }
    }

    /**
     * SHA-256 of the canonical payload: {@code refund}, {@code eventId}, {@code paymentEventId} (lower-case,
     * canonical form) and {@code amountCents} (decimal), each followed by a line feed but the last. The leading kind
     * keeps a refund's fingerprint apart from any payment's: an ID reused across the two kinds is a conflict.
     */
    @Override
    public byte[] fingerprint() {
        return DeliveredEvent.fingerprintOf("refund\n" + eventId + "\n" + paymentEventId + "\n" + amountCents);
    }
}
