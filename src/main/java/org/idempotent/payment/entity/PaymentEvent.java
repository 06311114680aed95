package org.idempotent.payment.entity;

import static java.util.Objects.requireNonNull;

import java.util.UUID;
import java.util.regex.Pattern;

/**
 * One payment as the producer sent it. The event ID is assigned once by the producer and is the same on every
 * redelivery: it is what makes a duplicate recognisable.
 */
public record PaymentEvent(UUID eventId, String accountId, long amountCents) {

    public static final Pattern ACCOUNT_ID = Pattern.compile("[A-Za-z0-9_.:-]{1,64}");
    public static final long MIN_AMOUNT_CENTS = 1;
    public static final long MAX_AMOUNT_CENTS = 1_000_000_000_000L;

    public PaymentEvent {
        requireNonNull(eventId, "eventId");
        requireNonNull(accountId, "accountId");
        if (!ACCOUNT_ID.matcher(accountId).matches()) {
            throw new IllegalArgumentException("accountId must be 1-64 of A-Z a-z 0-9 _ . : -");
        }
        if (amountCents < MIN_AMOUNT_CENTS || amountCents > MAX_AMOUNT_CENTS) {
            throw new IllegalArgumentException("amountCents must be within " + MIN_AMOUNT_CENTS + ".." + MAX_AMOUNT_CENTS);
        }
    }
}
