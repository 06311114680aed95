package org.idempotent.delivery.control;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import org.idempotent.delivery.entity.DeliveredEvent;
import org.idempotent.delivery.entity.Outcome;
import org.idempotent.delivery.entity.ProcessedEvent;
import org.idempotent.delivery.entity.Rejection;

/** What consuming one message did, and what each kind of outcome carries for the message to be settled by. */
public sealed interface DeliveryResult {

    Outcome outcome();

    /** {@link Outcome#APPLIED} or {@link Outcome#ALREADY_APPLIED}: nothing to move, nothing more to say. */
    record Done(Outcome outcome) implements DeliveryResult {

        public Done {
            if (outcome != Outcome.APPLIED && outcome != Outcome.ALREADY_APPLIED) {
                throw new IllegalArgumentException("not an applied event: " + outcome);
            }
        }
    }

    /** A copy of an event already recorded; {@code age} after its original, or null if that record is gone. */
    record Duplicate(Duration age) implements DeliveryResult {

        @Override
        public Outcome outcome() {
            return Outcome.DUPLICATE;
        }
    }

    /**
     * Not applied: the message is moved to the queue of its outcome, {@link Outcome#REJECTED} (not a valid event,
     * refused by the database, or not applicable after every delivery the budget allows), {@link Outcome#CONFLICT}
     * or {@link Outcome#QUARANTINED}, with the rejection and its evidence attached as string properties.
     */
    record MovedAside(Outcome outcome, Rejection rejection, Map<String, String> evidence) implements DeliveryResult {

        public MovedAside {
            if (outcome != Outcome.REJECTED && outcome != Outcome.CONFLICT && outcome != Outcome.QUARANTINED) {
                throw new IllegalArgumentException("not an outcome that is moved aside: " + outcome);
            }
            requireNonNull(rejection, "rejection");
            evidence = Map.copyOf(evidence);
        }

        static MovedAside rejected(Rejection rejection) {
            return new MovedAside(Outcome.REJECTED, rejection, Map.of());
        }

        /** Not applicable after {@code delivered} deliveries (what it waited for never came): dead-lettered. */
        static MovedAside givenUp(Rejection rejection, int delivered) {
            return new MovedAside(
                    Outcome.REJECTED, rejection, Map.of(MessageProperties.DELIVERIES, String.valueOf(delivered)));
        }

        /** {@code event} reuses the ID of {@code original} for a different event: both fingerprints as evidence. */
        static MovedAside conflict(DeliveredEvent event, ProcessedEvent original) {
            String originalFingerprint = HexFormat.of().formatHex(original.fingerprint());
            String fingerprint = HexFormat.of().formatHex(event.fingerprint());
            Rejection mismatch = new Rejection(
                    Rejection.Reason.PAYLOAD_MISMATCH,
                    "event " + event.eventId() + " was processed with payload fingerprint " + originalFingerprint
                            + ", this message has " + fingerprint);
            // The event ID as a property too: an operator moves one event's conflicts back by it (operate.sh).
            return new MovedAside(
                    Outcome.CONFLICT,
                    mismatch,
                    Map.of(
                            MessageProperties.EVENT_ID,
                            event.eventId().toString(),
                            MessageProperties.ORIGINAL_FINGERPRINT,
                            originalFingerprint,
                            MessageProperties.FINGERPRINT,
                            fingerprint));
        }
    }
}
