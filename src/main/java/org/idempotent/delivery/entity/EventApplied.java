package org.idempotent.delivery.entity;

import static java.util.Objects.requireNonNull;

import java.util.UUID;

/**
 * Fired once the transaction that applied an event has committed (whatever it wrote in that transaction, an
 * announcement in the outbox included, is visible by then). {@code kind} is the event type's name.
 */
public record EventApplied(UUID eventId, String kind) {

    public EventApplied {
        requireNonNull(eventId, "eventId");
        requireNonNull(kind, "kind");
    }
}
