package org.idempotent.announcement.entity;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.UUID;

/**
 * The outbox row of one applied payment: written by the payment's own transaction (PaymentProcessor's guarded upsert,
 * in SQL, so that it costs no round trip), published by the {@code Relay}, read here by the admin API. Read-only
 * through JPA: nothing here inserts or changes a row.
 */
@Entity
@Table(name = "payment_announcements")
public class Announcement {

    /** Published, or waiting for the relay. */
    public enum State {
        SENT,
        UNSENT
    }

    @Id
    @Column(name = "id")
    private Long id;

    @Column(name = "event_id", insertable = false, updatable = false)
    private UUID eventId;

    @Column(name = "account_id", insertable = false, updatable = false)
    private String accountId;

    @Column(name = "amount_cents", insertable = false, updatable = false)
    private long amountCents;

    @Column(name = "balance_cents", insertable = false, updatable = false)
    private long balanceCents;

    @Column(name = "account_sequence", insertable = false, updatable = false)
    private long sequence;

    @Column(name = "applied_at", insertable = false, updatable = false)
    private OffsetDateTime appliedAt;

    @Column(name = "sent_at", insertable = false, updatable = false)
    private OffsetDateTime sentAt;

    @Column(name = "send_attempts", insertable = false, updatable = false)
    private int sendAttempts;

    @Column(name = "generation", insertable = false, updatable = false)
    private int generation;

    protected Announcement() {
        // for JPA
    }

    public State state() {
        return sentAt == null ? State.UNSENT : State.SENT;
    }

    public UUID eventId() {
        return eventId;
    }

    public String accountId() {
        return accountId;
    }

    public long amountCents() {
        return amountCents;
    }

    public long balanceCents() {
        return balanceCents;
    }

    public long sequence() {
        return sequence;
    }

    public Instant appliedAt() {
        return appliedAt.toInstant();
    }

    public Instant sentAt() {
        return sentAt == null ? null : sentAt.toInstant();
    }

    public int sendAttempts() {
        return sendAttempts;
    }

    public int generation() {
        return generation;
    }
}
