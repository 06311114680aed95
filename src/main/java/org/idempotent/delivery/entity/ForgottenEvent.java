package org.idempotent.delivery.entity;

import static java.util.Objects.requireNonNull;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.UUID;

/** The audit row of one "forget event": who removed which dedup record, when, why, and what it said. */
@Entity
@Table(name = "forgotten_events")
public class ForgottenEvent {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    private Long id;

    @Column(name = "event_id", nullable = false, updatable = false)
    private UUID eventId;

    /** The database clock, like processed_at. */
    @Column(name = "forgotten_at", insertable = false, updatable = false)
    private OffsetDateTime forgottenAt;

    @Column(name = "forgotten_by", nullable = false, updatable = false)
    private String forgottenBy;

    @Column(name = "reason", nullable = false, updatable = false)
    private String reason;

    @Column(name = "processed_at", nullable = false, updatable = false)
    private OffsetDateTime processedAt;

    @Column(name = "fingerprint", updatable = false)
    private byte[] fingerprint;

    /** Whether the account's last_event_id still named the event and was cleared, so the replay is not refused. */
    @Column(name = "guard_released", nullable = false, updatable = false)
    private boolean guardReleased;

    protected ForgottenEvent() {
        // for JPA
    }

    public ForgottenEvent(ProcessedEvent forgotten, String forgottenBy, String reason, boolean guardReleased) {
        this.eventId = requireNonNull(forgotten, "forgotten").eventId();
        this.processedAt = requireNonNull(forgotten.processedAtWithOffset(), "processedAt");
        this.fingerprint = forgotten.fingerprint();
        this.forgottenBy = requireNonNull(forgottenBy, "forgottenBy");
        this.reason = requireNonNull(reason, "reason");
        this.guardReleased = guardReleased;
    }

    public UUID eventId() {
        return eventId;
    }

    public Instant forgottenAt() {
        return forgottenAt == null ? null : forgottenAt.toInstant();
    }

    public String forgottenBy() {
        return forgottenBy;
    }

    public String reason() {
        return reason;
    }

    public Instant processedAt() {
        return processedAt.toInstant();
    }

    public byte[] fingerprint() {
        return fingerprint == null ? null : fingerprint.clone();
    }

    public boolean guardReleased() {
        return guardReleased;
    }
}
