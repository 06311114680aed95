package org.idempotent.payment.entity;

import static java.util.Objects.requireNonNull;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;
import java.util.UUID;

/**
 * The record that an event was consumed. Its primary key is the dedup decision: a second insert of the same event ID
 * fails with a unique violation, whatever the timing of the two deliveries.
 */
@Entity
@Table(name = "processed_events")
public class ProcessedEvent {

    @Id
    @Column(name = "event_id", nullable = false, updatable = false)
    private UUID eventId;

    /** Set by the database clock, so retention does not depend on the clocks of the consumer nodes. */
    @Column(name = "processed_at", insertable = false, updatable = false)
    private Instant processedAt;

    protected ProcessedEvent() {
        // for JPA
    }

    public ProcessedEvent(UUID eventId) {
        this.eventId = requireNonNull(eventId, "eventId");
    }

    public UUID eventId() {
        return eventId;
    }

    public Instant processedAt() {
        return processedAt;
    }
}
