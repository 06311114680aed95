package org.idempotent.payment.entity;

import static java.util.Objects.requireNonNull;

import java.time.Instant;
import java.util.UUID;
import java.util.regex.Pattern;
import org.idempotent.delivery.entity.DeliveredEvent;

/**
 * One payment as the producer sent it. The event ID is assigned once by the producer and is the same on every
 * redelivery: it is what makes a duplicate recognisable. {@code occurredAt} (contract version 2, optional) is when the
 * payment happened by the producer's clock, the same on every resend: null for an event that does not say.
 */
public record PaymentEvent(UUID eventId, String accountId, long amountCents, Instant occurredAt)
        implements DeliveredEvent {

    public static final Pattern ACCOUNT_ID = Pattern.compile("[A-Za-z0-9_.:-]{1,64}");
    public static final long MIN_AMOUNT_CENTS = 1;
    public static final long MAX_AMOUNT_CENTS = 1_000_000_000_000L;

    /** An event of contract version 1, without an occurrence time. */
    public PaymentEvent(UUID eventId, String accountId, long amountCents) {
        this(eventId, accountId, amountCents, null);
    }

    /**
     * SHA-256 of the canonical payload: {@code eventId} (lower-case, canonical form), {@code accountId} and
     * {@code amountCents} (decimal), each followed by a line feed but the last. Field order and spelling in the JSON do
     * not matter; fields outside the contract are not part of it, and neither is {@code occurredAt}: a resend that
     * stamps another time is the same payment.
     */
    @Override
    public byte[] fingerprint() {
        return DeliveredEvent.fingerprintOf(eventId + "\n" + accountId + "\n" + amountCents);
    }

    public PaymentEvent {
        requireNonNull(eventId, "eventId");
        requireNonNull(accountId, "accountId");
        if (!ACCOUNT_ID.matcher(accountId).matches()) {
            throw new IllegalArgumentException("accountId must be 1-64 of A-Z a-z 0-9 _ . : -");
        }
        if (amountCents < MIN_AMOUNT_CENTS || amountCents > MAX_AMOUNT_CENTS) {
            throw new IllegalArgumentException(
                    "amountCents must be within " + MIN_AMOUNT_CENTS + ".." + MAX_AMOUNT_CENTS);
        }
    }
}
