package org.idempotent.payment.control;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Event;
import jakarta.inject.Inject;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.idempotent.payment.entity.Outcome;
import org.idempotent.payment.entity.PaymentApplied;
import org.idempotent.payment.entity.PaymentEvent;
import org.idempotent.payment.entity.ProcessedEvent;
import org.idempotent.payment.entity.RejectedMessage;

/**
 * One delivery of the payments queue, from the message to its outcome: read as a {@link PaymentEvent} or rejected,
 * judged against the {@link DedupHorizon}, applied by {@link PaymentProcessor#apply} (whose transaction has committed
 * or rolled back before the duplicate's original is read, so the read cannot widen the race), and settled: a message
 * that is not applied is moved aside by {@link DeadLetters} with its reason. A plain CDI bean, not an EJB: it needs no
 * transaction of its own, so it should not cost a container invocation per message.
 */
@ApplicationScoped
public class PaymentDelivery {

    private static final Logger LOG = Logger.getLogger(PaymentDelivery.class.getName());

    @Inject
    PaymentProcessor processor;

    @Inject
    DedupHorizon horizon;

    @Inject
    DatabaseBreaker breaker;

    @Inject
    PaymentMetrics metrics;

    @Inject
    DeadLetters deadLetters;

    @Inject
    Event<PaymentApplied> applied;

    /**
     * @throws RuntimeException on a transient or unclassified failure, after the breaker has probed the database: the
     *     adapter rolls the session back and the broker redelivers the message
     */
    public void receive(Message message) {
        // Before the delivery counts as started: waiting out an outage is not a stuck delivery.
        breaker.awaitClosed();
        long started = metrics.started();
        Outcome outcome = Outcome.FAILED;
        try {
            if (message.getJMSRedelivered()) {
                metrics.redelivered();
            }
            DeliveryResult result = consume(message);
            if (result instanceof DeliveryResult.MovedAside aside) {
                deadLetters.moveAside(message, aside);
            }
            outcome = result.outcome();
        } catch (JMSException | RuntimeException e) {
            LOG.log(Level.WARNING, "Message {0} failed; the broker will redeliver it: {1}", new Object[] {
                MessageProperties.describe(message), DatabaseFailure.rootCause(e)
            });
            throw e instanceof RuntimeException unchecked ? unchecked : new IllegalStateException(e);
        } finally {
            metrics.finished(started, outcome);
        }
    }

    private DeliveryResult consume(Message message) throws JMSException {
        try {
            return consume(PaymentMessageParser.read(message), MessageProperties.firstSent(message));
        } catch (RejectedMessage rejected) {
            return DeliveryResult.MovedAside.rejected(rejected.rejection());
        }
    }

    /**
     * An event older than the horizon is judged before anything is written: if its record is still there, it is a
     * duplicate like any other; if not, it may be a duplicate whose record retention purged, so it is quarantined
     * unless an administrator released it.
     *
     * @param firstSent when the message was first sent (see {@link DedupHorizon}); null if unknown
     * @throws RejectedMessage if the database refuses the event on every attempt (permanent: move it aside)
     */
    private DeliveryResult consume(PaymentEvent event, Instant firstSent) {
        try {
            Instant now = Instant.now();
            Optional<DeliveryResult.MovedAside> stale = horizon.stale(event, firstSent, now);
            if (stale.isPresent()) {
                Optional<ProcessedEvent> original = processor.recordOf(event.eventId());
                if (original.isPresent()) {
                    return afterDuplicate(event, original.get());
                }
                if (!processor.releasedSince(event.eventId(), now.minus(horizon.horizon()))) {
                    return stale.get();
                }
            }
            Outcome outcome = processor.apply(event);
            if (outcome == Outcome.APPLIED) {
                // Committed: the relay may publish the announcement now.
                applied.fire(new PaymentApplied(event.eventId(), event.accountId()));
            } else if (outcome == Outcome.ALREADY_APPLIED) {
                LOG.log(
                        Level.INFO,
                        "Event {0} had no dedup record but was already applied to account {1}",
                        new Object[] {event.eventId(), event.accountId()});
            }
            if (outcome != Outcome.DUPLICATE) {
                return new DeliveryResult.Done(outcome);
            }
            return processor
                    .recordOf(event.eventId())
                    .map(original -> afterDuplicate(event, original))
                    .orElseGet(() -> new DeliveryResult.Duplicate(null));
        } catch (RuntimeException e) {
            throw breaker.failed(e);
        }
    }

    /** A copy whose occurredAt falls on another day than its record's (table partitioned by week only). */
    private static boolean placedElsewhere(PaymentEvent event, ProcessedEvent original) {
        return event.occurredAt() != null
                && original.eventDay() != null
                && !ProcessedEvent.NOT_PLACED.equals(original.eventDay())
                && !original.eventDay().equals(ProcessedEvent.dayOf(event, Instant.now()));
    }

    private DeliveryResult afterDuplicate(PaymentEvent event, ProcessedEvent original) {
        if (original.conflictsWith(event)) {
            return DeliveryResult.MovedAside.conflict(event, original);
        }
        if (placedElsewhere(event, original)) {
            LOG.log(
                    Level.WARNING,
                    "Event {0} is recorded as occurred on {1}, this copy says {2}: its producer changed "
                            + "occurredAt, which the contract forbids; acknowledged as the duplicate it is",
                    new Object[] {event.eventId(), original.eventDay(), event.occurredAt()});
        }
        Duration age = Duration.between(original.processedAt(), Instant.now());
        metrics.duplicateArrived(age);
        LOG.log(Level.FINE, "Duplicate event {0} acknowledged without effect", event.eventId());
        return new DeliveryResult.Duplicate(age);
    }
}
