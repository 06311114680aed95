package org.idempotent.delivery.entity;

import static java.util.Objects.requireNonNull;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.security.MessageDigest;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * The record that an event was consumed, of whatever kind. Its primary key is the dedup decision: a second insert of
 * the same event ID fails with a unique violation, whatever the timing of the two deliveries. One table for every
 * kind: an event ID is unique across kinds, and {@link #kind} says which event type recorded it.
 */
@Entity
@Table(name = "processed_events")
public class ProcessedEvent {

    /**
     * The unique key whose violation means "already processed" (V1__payments.sql; PostgreSQL's name for the primary
     * key). Only this constraint is a duplicate: a violation of any other is a refused event. In a partitioned table a
     * violation names the partition's copy of it ({@link #isDedupKey}).
     */
    public static final String DEDUP_KEY = "processed_events_pkey";

    /** The partitions' keys in the table by event ID (V12): v7 days, their default, every other version. */
    private static final Pattern PARTITION_KEY =
            Pattern.compile("processed_events_(v7_d[0-9]{8}|v7_default|other)_pkey");

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

    /** The event type that recorded it (V9__processed_events_kind.sql): what a reviewer tells the kinds apart by. */
    @Column(name = "kind", updatable = false)
    private String kind;

    /**
     * The ID's version nibble (RFC 9562), a function of the ID: in the table by event ID (V12) the partition key, so
     * that a day of time-ordered v7 IDs is a partition and every other version goes to one table. Null in a record
     * written before V12 in the unpartitioned table.
     */
    @Column(name = "id_version", updatable = false)
    private Short idVersion;

    protected ProcessedEvent() {
        // for JPA
    }

    /** The record of {@code event}, of the type named {@code kind}. */
    public ProcessedEvent(DeliveredEvent event, String kind) {
        this.eventId = requireNonNull(event, "event").eventId();
        this.fingerprint = event.fingerprint();
        this.kind = requireNonNull(kind, "kind");
        this.idVersion = (short) eventId.version();
    }

    /** Whether a violation of {@code constraint} means "already processed", in either layout of the table. */
    public static boolean isDedupKey(String constraint) {
        return constraint != null
                && (DEDUP_KEY.equals(constraint)
                        || PARTITION_KEY.matcher(constraint).matches());
    }

    /**
     * Whether {@code event} is provably a different event under the same ID. An unknown (pre-fingerprint) record is
     * given the benefit of the doubt: a duplicate.
     */
    public boolean conflictsWith(DeliveredEvent event) {
        return fingerprint != null && !MessageDigest.isEqual(fingerprint, event.fingerprint());
    }

    public byte[] fingerprint() {
        return fingerprint == null ? null : fingerprint.clone();
    }

    public UUID eventId() {
        return eventId;
    }

    /** The event type's name; {@code payment} for every record written before there were others. */
    public String kind() {
        return kind;
    }

    /** Null for a record written before V12 in the unpartitioned table. */
    public Short idVersion() {
        return idVersion;
    }

    public Instant processedAt() {
        return processedAt == null ? null : processedAt.toInstant();
    }

    OffsetDateTime processedAtWithOffset() {
        return processedAt;
    }
}
