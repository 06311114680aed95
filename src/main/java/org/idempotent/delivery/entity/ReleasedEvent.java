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

/** The audit row of one "release from quarantine": who let which stale event be applied, when and why. */
@Entity
@Table(name = "released_events")
public class ReleasedEvent {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    private Long id;

    @Column(name = "event_id", nullable = false, updatable = false)
    private UUID eventId;

    /** The database clock, like processed_at. */
    @Column(name = "released_at", insertable = false, updatable = false)
    private OffsetDateTime releasedAt;

    @Column(name = "released_by", nullable = false, updatable = false)
    private String releasedBy;

    @Column(name = "reason", nullable = false, updatable = false)
    private String reason;

    protected ReleasedEvent() {
        // for JPA
    }

    public ReleasedEvent(UUID eventId, String releasedBy, String reason) {
        this.eventId = requireNonNull(eventId, "eventId");
        this.releasedBy = requireNonNull(releasedBy, "releasedBy");
        this.reason = requireNonNull(reason, "reason");
    }

    public UUID eventId() {
        return eventId;
    }

    public Instant releasedAt() {
        return releasedAt == null ? null : releasedAt.toInstant();
    }

    public String releasedBy() {
        return releasedBy;
    }

    public String reason() {
        return reason;
    }
}
