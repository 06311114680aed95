package org.idempotent.payment.control;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.Map;
import org.idempotent.payment.entity.Outcome;
import org.idempotent.payment.entity.Rejection;

/** What consuming one event did, and what each kind of outcome carries for the consumer to act on. */
public sealed interface Consumed {

    Outcome outcome();

    /** {@link Outcome#APPLIED} or {@link Outcome#ALREADY_APPLIED}: nothing to move, nothing more to say. */
    record Done(Outcome outcome) implements Consumed {

        public Done {
            if (outcome != Outcome.APPLIED && outcome != Outcome.ALREADY_APPLIED) {
                throw new IllegalArgumentException("not a completed payment: " + outcome);
            }
        }
    }

    /** A copy of an event already recorded; {@code age} after its original, or null if that record is gone. */
    record Duplicate(Duration age) implements Consumed {

        @Override
        public Outcome outcome() {
            return Outcome.DUPLICATE;
        }
    }

    /**
     * Not applied, and not malformed either: the message is moved to the queue of its outcome ({@link Outcome#CONFLICT}
     * or {@link Outcome#QUARANTINED}) with the rejection and its evidence attached as string properties.
     */
    record MovedAside(Outcome outcome, Rejection rejection, Map<String, String> evidence) implements Consumed {

        public MovedAside {
            if (outcome != Outcome.CONFLICT && outcome != Outcome.QUARANTINED) {
                throw new IllegalArgumentException("not an outcome that is moved aside: " + outcome);
            }
            requireNonNull(rejection, "rejection");
            evidence = Map.copyOf(evidence);
        }
    }
}
