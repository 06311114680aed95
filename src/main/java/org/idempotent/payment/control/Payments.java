package org.idempotent.payment.control;

import jakarta.ejb.EJB;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import org.idempotent.payment.entity.Outcome;
import org.idempotent.payment.entity.PaymentEvent;
import org.idempotent.payment.entity.RejectedMessage;

/**
 * The one call the consumer makes per event: applies it, and if it is a duplicate, tells a true duplicate from a
 * producer that reused the ID for a different payment. No transaction of its own: {@link PaymentProcessor#apply} has
 * committed or rolled back before the original record is read, so the read cannot widen the race. A plain CDI bean,
 * not an EJB: it needs no transaction, so it should not cost a container invocation per message.
 */
@ApplicationScoped
public class Payments {

    /**
     * The outcome; for a {@link Outcome#CONFLICT}, the fingerprints of the original and of this event (hex); for a
     * {@link Outcome#DUPLICATE} whose original is still recorded, how long after it this copy came.
     */
    public record Consumed(Outcome outcome, String originalFingerprint, String fingerprint, Duration duplicateAge) {

        static Consumed of(Outcome outcome) {
            return new Consumed(outcome, null, null, null);
        }
    }

    @EJB
    PaymentProcessor processor;

    @Inject
    DatabaseBreaker breaker;

    @Inject
    PaymentMetrics metrics;

    /**
     * @throws RejectedMessage if the database refuses the event on every attempt (permanent: dead-letter it)
     * @throws RuntimeException on a transient or unclassified failure, after the breaker has probed the database
     */
    public Consumed consume(PaymentEvent event) {
        try {
            return classify(event, processor.apply(event));
        } catch (RejectedMessage rejected) {
            metrics.databaseFailure(DatabaseFailure.Kind.PERMANENT);
            throw rejected;
        } catch (RuntimeException e) {
            DatabaseFailure failure = DatabaseFailure.of(e);
            metrics.databaseFailure(failure.kind());
            if (failure.kind() == DatabaseFailure.Kind.PERMANENT) {
                // Refused at commit (a deferred constraint): as permanent as a refused statement.
                throw new RejectedMessage(failure.rejection());
            }
            breaker.failed();
            throw e;
        }
    }

    private Consumed classify(PaymentEvent event, Outcome outcome) {
        if (outcome != Outcome.DUPLICATE) {
            return Consumed.of(outcome);
        }
        return processor.original(event.eventId())
                .map(original -> original.conflictsWith(event)
                        ? new Consumed(Outcome.CONFLICT, HexFormat.of().formatHex(original.fingerprint()),
                                HexFormat.of().formatHex(event.fingerprint()), null)
                        : new Consumed(Outcome.DUPLICATE, null, null,
                                Duration.between(original.processedAt(), Instant.now())))
                .orElse(Consumed.of(Outcome.DUPLICATE));
    }
}
