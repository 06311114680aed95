package org.idempotent.payment.control;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Event;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import org.idempotent.payment.entity.Outcome;
import org.idempotent.payment.entity.PaymentApplied;
import org.idempotent.payment.entity.PaymentEvent;
import org.idempotent.payment.entity.ProcessedEvent;
import org.idempotent.payment.entity.RejectedMessage;
import org.idempotent.payment.entity.Rejection;

/**
 * The one call the consumer makes per event: applies it, and if it is a duplicate, tells a true duplicate from a
 * producer that reused the ID for a different payment. No transaction of its own: {@link PaymentProcessor#apply} has
 * committed or rolled back before the original record is read, so the read cannot widen the race. A plain CDI bean,
 * not an EJB: it needs no transaction, so it should not cost a container invocation per message.
 *
 * <p>An event older than the {@link DedupHorizon} is judged before anything is written: if its record is still there,
 * it is a duplicate like any other; if not, it may be a duplicate whose record retention purged, so it is quarantined
 * unless an administrator released it.
 */
@ApplicationScoped
public class Payments {

    /** A payload mismatch's evidence: the fingerprint recorded first under the event ID, and this message's. */
    public static final String ORIGINAL_FINGERPRINT = "originalFingerprint";

    public static final String FINGERPRINT = "fingerprint";

    @Inject
    PaymentProcessor processor;

    @Inject
    DedupHorizon horizon;

    @Inject
    DatabaseBreaker breaker;

    @Inject
    PaymentMetrics metrics;

    @Inject
    Event<PaymentApplied> applied;

    /**
     * @param firstSent when the message was first sent (see {@link DedupHorizon}); null if unknown
     * @throws RejectedMessage if the database refuses the event on every attempt (permanent: dead-letter it)
     * @throws RuntimeException on a transient or unclassified failure, after the breaker has probed the database
     */
    public Consumed consume(PaymentEvent event, Instant firstSent) {
        try {
            Instant now = Instant.now();
            Optional<Consumed.MovedAside> stale = horizon.stale(event, firstSent, now);
            if (stale.isPresent()) {
                Optional<ProcessedEvent> original = processor.original(event.eventId());
                if (original.isPresent()) {
                    return afterDuplicate(event, original.get());
                }
                if (!processor.released(event.eventId(), now.minus(horizon.horizon()))) {
                    return stale.get();
                }
            }
            Outcome outcome = processor.apply(event);
            if (outcome == Outcome.APPLIED) {
                // Committed: the relay may publish the announcement now.
                applied.fire(new PaymentApplied(event.eventId(), event.accountId()));
            }
            if (outcome != Outcome.DUPLICATE) {
                return new Consumed.Done(outcome);
            }
            return processor
                    .original(event.eventId())
                    .map(original -> afterDuplicate(event, original))
                    .orElseGet(() -> new Consumed.Duplicate(null));
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

    private static Consumed afterDuplicate(PaymentEvent event, ProcessedEvent original) {
        if (!original.conflictsWith(event)) {
            return new Consumed.Duplicate(Duration.between(original.processedAt(), Instant.now()));
        }
        String originalFingerprint = HexFormat.of().formatHex(original.fingerprint());
        String fingerprint = HexFormat.of().formatHex(event.fingerprint());
        Rejection mismatch = new Rejection(
                Rejection.Reason.PAYLOAD_MISMATCH,
                "event " + event.eventId() + " was processed with payload fingerprint " + originalFingerprint
                        + ", this message has " + fingerprint);
        // The event ID as a property too: an operator moves one event's conflicts back by it (operate.sh).
        return new Consumed.MovedAside(
                Outcome.CONFLICT,
                mismatch,
                Map.of(
                        DedupHorizon.EVENT_ID,
                        event.eventId().toString(),
                        ORIGINAL_FINGERPRINT,
                        originalFingerprint,
                        FINGERPRINT,
                        fingerprint));
    }
}
