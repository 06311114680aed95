package org.idempotent.delivery.entity;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.UUID;

/**
 * What the delivery machinery needs to know of an event of any kind: the ID the producer assigned once (the same on
 * every redelivery, the key of its {@link ProcessedEvent}), when it occurred if the producer says, and the fingerprint
 * that tells a copy from a different event reusing the ID.
 */
public interface DeliveredEvent {

    UUID eventId();

    /** When the event happened by the producer's clock, the same on every resend; null if the event does not say. */
    Instant occurredAt();

    /** SHA-256 of the event's canonical payload: equal for every copy of one event, different for another event. */
    byte[] fingerprint();

    /** SHA-256 of {@code canonical} in UTF-8: what a fingerprint is made of, for every event type. */
    static byte[] fingerprintOf(String canonical) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(canonical.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }
}
