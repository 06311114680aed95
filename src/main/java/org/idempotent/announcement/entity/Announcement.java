package org.idempotent.announcement.entity;

import static java.util.Objects.requireNonNull;

import java.time.Instant;
import java.util.UUID;

/**
 * An outbox row as the admin API shows it: one applied payment's or refund's announcement ({@code kind}), and whether
 * the relay has published it.
 *
 * @param state SENT once the relay's position is past the row
 * @param sendAttempts publications so far: more than 1 after a relay stopped mid-window and published it again
 * @param generation 0 for the payment's own announcement, raised by each re-announcement (a copy of its own)
 */
public record Announcement(
        UUID eventId,
        String accountId,
        long sequence,
        long amountCents,
        long balanceCents,
        Instant appliedAt,
        Announcement.State state,
        int sendAttempts,
        int generation,
        String kind) {

    /** Published, or waiting for the relay. */
    public enum State {
        SENT,
        UNSENT
    }

    public Announcement {
        requireNonNull(eventId, "eventId");
        requireNonNull(accountId, "accountId");
        requireNonNull(appliedAt, "appliedAt");
        requireNonNull(state, "state");
        requireNonNull(kind, "kind");
    }
}
