package org.idempotent.payment.entity;

import static java.util.Objects.requireNonNull;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.security.MessageDigest;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.UUID;

/**
 * The record that an event was consumed. Its primary key is the dedup decision: a second insert of the same event ID
 * fails with a unique violation, whatever the timing of the two deliveries.
 */
@Entity
@Table(name = "processed_events")
public class ProcessedEvent {

    /**
     * The unique key whose violation means "already processed" (V1__payments.sql; PostgreSQL's name for the primary
     * key). Only this constraint is a duplicate: a violation of any other is a refused payment.
     */
    public static final String DEDUP_KEY = "processed_events_pkey";

    @Id
    @Column(name = "event_id", nullable = false, updatable = false)
    private UUID eventId;

    /**
     * Set by the database clock, so retention does not depend on the clocks of the consumer nodes. OffsetDateTime:
     * Payara's EclipseLink 4.0 cannot read a timestamptz into an Instant.
     */
    @Column(name = "processed_at", insertable = false, updatable = false)
    private OffsetDateTime processedAt;

    /** SHA-256 of the payload first processed under this ID; null for rows recorded before fingerprints existed. */
    @Column(name = "fingerprint", updatable = false)
    private byte[] fingerprint;

    protected ProcessedEvent() {
        // for JPA
    }

    public ProcessedEvent(PaymentEvent event) {
        this.eventId = requireNonNull(event, "event").eventId();
        this.fingerprint = event.fingerprint();
    }

    /**
     * Whether {@code event} is provably a different payment under the same ID. An unknown (pre-fingerprint) record is
     * given the benefit of the doubt: a duplicate.
     */
    public boolean conflictsWith(PaymentEvent event) {
        return fingerprint != null && !MessageDigest.isEqual(fingerprint, event.fingerprint());
    }

    public byte[] fingerprint() {
        return fingerprint == null ? null : fingerprint.clone();
    }

    public UUID eventId() {
        return eventId;
    }

    public Instant processedAt() {
        return processedAt == null ? null : processedAt.toInstant();
    }

    OffsetDateTime processedAtWithOffset() {
        return processedAt;
    }
}
