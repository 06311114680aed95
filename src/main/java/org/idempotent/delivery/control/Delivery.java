package org.idempotent.delivery.control;

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
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.idempotent.delivery.entity.DeliveredEvent;
import org.idempotent.delivery.entity.EventApplied;
import org.idempotent.delivery.entity.NotYetApplicable;
import org.idempotent.delivery.entity.Outcome;
import org.idempotent.delivery.entity.ProcessedEvent;
import org.idempotent.delivery.entity.RejectedMessage;
import org.idempotent.retention.entity.RetentionPolicy;
import org.idempotent.telemetry.Tracing;

/**
 * One delivery of an event of any kind, from the message to its outcome: read by its {@link EventType} or rejected,
 * judged against the {@link DedupHorizon}, applied by {@link EventProcessor#apply} (whose transaction has committed or
 * rolled back before the duplicate's original is read, so the read cannot widen the race), and settled: a message that
 * is not applied is moved aside by {@link DeadLetters} with its reason. A plain CDI bean, not an EJB: it needs no
 * transaction of its own, so it should not cost a container invocation per message.
 */
@ApplicationScoped
public class Delivery {

    private static final Logger LOG = Logger.getLogger(Delivery.class.getName());

    /**
     * How often a message whose event is not applicable yet ({@link NotYetApplicable}) is delivered before it is
     * dead-lettered with its reason.
     */
    public static final String DEFERRED_DELIVERIES = "DEFERRED_DELIVERIES_MAX";

    @Inject
    EventProcessor processor;

    @Inject
    DedupHorizon horizon;

    @Inject
    DatabaseBreaker breaker;

    @Inject
    DeliveryMetrics metrics;

    @Inject
    DeadLetters deadLetters;

    @Inject
    Event<EventApplied> applied;

    @Inject
    Tracing tracing;

    @Inject
    @ConfigProperty(name = DEFERRED_DELIVERIES)
    int deferredDeliveries;

    /** The longest a deferred message waits for its next delivery: the broker's own redelivery back-off's cap. */
    @Inject
    @ConfigProperty(name = RetentionPolicy.MAX_REDELIVERY_DELAY_SECONDS)
    int longestDeferral;

    /**
     * @throws RuntimeException on a transient or unclassified failure, after the breaker has probed the database: the
     *     adapter rolls the session back and the broker redelivers the message
     */
    public <E extends DeliveredEvent> void receive(Message message, EventType<E> type) {
        // Before the delivery counts as started: waiting out an outage is not a stuck delivery.
        breaker.awaitClosed();
        long started = metrics.started();
        Outcome outcome = Outcome.FAILED;
        DeliverySpan span = DeliverySpan.start(tracing, message);
        try {
            if (message.getJMSRedelivered()) {
                metrics.redelivered();
            }
            DeliveryResult result;
            try {
                result = consume(message, type, span);
            } catch (NotYetApplicable notYet) {
                deferAgain(message, notYet, span);
                outcome = Outcome.DEFERRED;
                return;
            }
            if (result instanceof DeliveryResult.MovedAside aside) {
                deadLetters.moveAside(message, aside);
            }
            span.settled(result);
            outcome = result.outcome();
        } catch (JMSException | RuntimeException e) {
            LOG.log(Level.WARNING, "Message {0} failed; the broker will redeliver it: {1}", new Object[] {
                MessageProperties.describe(message), DatabaseFailure.rootCause(e)
            });
            span.failed(e);
            throw e instanceof RuntimeException unchecked ? unchecked : new IllegalStateException(e);
        } finally {
            metrics.finished(started, outcome);
            span.outcome(outcome);
            span.close();
        }
    }

    private <E extends DeliveredEvent> DeliveryResult consume(Message message, EventType<E> type, DeliverySpan span)
            throws JMSException {
        try {
            E event = type.read(message);
            span.event(event, type.kind());
            return consume(event, type, MessageProperties.firstSent(message));
        } catch (RejectedMessage rejected) {
            return DeliveryResult.MovedAside.rejected(rejected.rejection());
        } catch (NotYetApplicable notYet) {
            int delivered = deliveries(message);
            if (delivered >= deferredDeliveries) {
                return DeliveryResult.MovedAside.givenUp(notYet.ifGivenUp(), delivered);
            }
            throw notYet;
        }
    }

    /** This delivery's number: 1, or one more than the deferred copy it is carries. */
    private static int deliveries(Message message) throws JMSException {
        return message.propertyExists(MessageProperties.DELIVERIES)
                ? message.getIntProperty(MessageProperties.DELIVERIES) + 1
                : 1;
    }

    /**
     * A copy of the message, held by the broker for the back-off of its next delivery (1 s doubling, up to the
     * broker's own cap), and this one acknowledged: no session rolled back, no broker delivery attempt spent, and a
     * crash between the two only sends the same copy again, which the broker drops (DeadLetters#deferred).
     */
    private void deferAgain(Message message, NotYetApplicable notYet, DeliverySpan span) throws JMSException {
        int delivered = deliveries(message);
        Duration delay = Duration.ofSeconds(Math.min(1L << Math.min(delivered - 1, 20), longestDeferral));
        deadLetters.deferred(message, delay, delivered);
        span.deferred(delivered, delay);
        LOG.log(Level.INFO, "Message {0} not applicable yet ({1}), delivered again in {2} s", new Object[] {
            MessageProperties.describe(message), notYet.getMessage(), delay.toSeconds()
        });
    }

    /**
     * An event older than the horizon is judged before anything is written: if its record is still there, it is a
     * duplicate like any other; if not, it may be a duplicate whose record retention purged, so it is quarantined
     * unless an administrator released it.
     *
     * @param firstSent when the message was first sent (see {@link DedupHorizon}); null if unknown
     * @throws RejectedMessage if the database refuses the event on every attempt (permanent: move it aside)
     */
    private <E extends DeliveredEvent> DeliveryResult consume(E event, EventType<E> type, Instant firstSent) {
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
            Outcome outcome = processor.apply(event, type);
            if (outcome == Outcome.APPLIED) {
                // Committed: the relay may publish the announcement now.
                applied.fire(new EventApplied(event.eventId(), type.kind()));
            } else if (outcome == Outcome.ALREADY_APPLIED) {
                LOG.log(Level.INFO, "{0} event {1} had no dedup record but was already applied", new Object[] {
                    type.kind(), event.eventId()
                });
            }
            if (outcome != Outcome.DUPLICATE) {
                return new DeliveryResult.Done(outcome);
            }
            return processor
                    .recordOf(event.eventId())
                    .map(original -> afterDuplicate(event, original))
                    .orElseGet(() -> new DeliveryResult.Duplicate(null));
        } catch (NotYetApplicable | RejectedMessage answer) {
            throw answer; // the event type's own answer, not a failure of the database: nothing for the breaker
        } catch (RuntimeException e) {
            throw breaker.failed(e);
        }
    }

    private DeliveryResult afterDuplicate(DeliveredEvent event, ProcessedEvent original) {
        if (original.conflictsWith(event)) {
            return DeliveryResult.MovedAside.conflict(event, original);
        }
        Duration age = Duration.between(original.processedAt(), Instant.now());
        metrics.duplicateArrived(age);
        LOG.log(Level.FINE, "Duplicate event {0} acknowledged without effect", event.eventId());
        return new DeliveryResult.Duplicate(age);
    }
}
