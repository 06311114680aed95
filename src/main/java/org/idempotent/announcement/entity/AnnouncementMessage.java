package org.idempotent.announcement.entity;

import static java.util.Objects.requireNonNull;

import jakarta.json.Json;
import jakarta.json.JsonBuilderFactory;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.idempotent.telemetry.TraceContext;

/**
 * What the relay publishes for one outbox row: the message contract of {@code payments.applied}
 * (src/site/markdown/message-contract.md). The body is JSON; the event ID, account and sequence are also properties,
 * for selectors and for a subscriber that drops what it has seen without parsing.
 *
 * @param rowId the outbox row's identity, drawn under the account's row lock: the relay's order
 * @param generation raised by each re-announcement, so that a deliberate copy is not dropped as a duplicate
 * @param sendAttempts publications of this row so far, this one included
 * @param kind what was applied: {@code payment}, or {@code refund} (whose {@code amountCents} is negative: the change
 *     to the balance)
 * @param trace the trace context of the transaction that wrote the row, the parent of its publish
 */
public record AnnouncementMessage(
        long rowId,
        UUID eventId,
        String accountId,
        long amountCents,
        long balanceCents,
        long sequence,
        Instant appliedAt,
        int generation,
        int sendAttempts,
        String kind,
        TraceContext trace) {

    /** The message's properties, besides JMSXGroupID (the account) and _AMQ_DUPL_ID ({@link #duplicateId()}). */
    public static final String EVENT_ID = "eventId";

    public static final String ACCOUNT_ID = "accountId";
    public static final String SEQUENCE = "sequence";

    /** Looked up once: Json.createObjectBuilder() looks the provider up on every call. */
    private static final JsonBuilderFactory JSON = Json.createBuilderFactory(Map.of());

    public AnnouncementMessage {
        requireNonNull(eventId, "eventId");
        requireNonNull(accountId, "accountId");
        requireNonNull(appliedAt, "appliedAt");
        requireNonNull(kind, "kind");
        requireNonNull(trace, "trace");
    }

    /**
     * The same on every publication of one row (a resend after a crash is dropped), new for a re-announcement and for
     * any other application of the event. Not the row's identity: identities start again in a recreated or restored
     * database, and the broker would drop new announcements whose number it still remembers. Nor the event and its
     * sequence alone: an event applied again after a restore may get the same sequence, and is a new announcement.
     */
    public String duplicateId() {
        return "payment-applied:" + eventId + ":" + sequence + ":" + appliedAt + ":" + generation;
    }

    public boolean republished() {
        return sendAttempts > 1;
    }

    public String json() {
        return JSON.createObjectBuilder()
                .add("eventId", eventId.toString())
                .add("accountId", accountId)
                .add("amountCents", amountCents)
                .add("balanceCents", balanceCents)
                .add("sequence", sequence)
                .add("appliedAt", appliedAt.toString())
                .add("kind", kind)
                .build()
                .toString();
    }
}
