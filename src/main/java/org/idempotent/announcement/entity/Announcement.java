package org.idempotent.announcement.entity;

import static java.util.Objects.requireNonNull;

import java.time.Instant;
import java.util.UUID;

/**
 * An outbox row as the admin API shows it: one applied payment's announcement, and whether the relay has published it.
 *
 * @param state SENT once {@code sentAt} is set
 * @param sentAt null while unsent
 * @param sendAttempts publications so far: more than 1 after a crash between a send and its mark, or a re-announcement
 * @param generation raised by each re-announcement
 */
public record Announcement(
        UUID eventId,
        String accountId,
        long sequence,
        long amountCents,
        long balanceCents,
        Instant appliedAt,
        Announcement.State state,
        Instant sentAt,
        int sendAttempts,
        int generation) {

    /** Published, or waiting for the relay. */
    public enum State {
        SENT,
        UNSENT
    }

    public Announcement {
        requireNonNull(eventId, "eventId");
        requireNonNull(accountId, "accountId");
        requireNonNull(appliedAt, "appliedAt");
        if (state != (sentAt == null ? State.UNSENT : State.SENT)) {
            throw new IllegalArgumentException(state + " with sentAt " + sentAt);
        }
    }
}
