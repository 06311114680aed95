package org.idempotent.delivery.control;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import jakarta.jms.Destination;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.Queue;
import java.time.Duration;
import org.idempotent.delivery.entity.DeliveredEvent;
import org.idempotent.delivery.entity.Outcome;
import org.idempotent.telemetry.Tracing;

/**
 * The CONSUMER span of one delivery, current while it is processed (the dedup insert's and the applier's spans are its
 * children, and the outbox row stores its context): which event, of which kind, and what became of it. A duplicate's
 * span says so and links to nothing: its original's trace is not known without a read. Inert when tracing is off.
 */
final class DeliverySpan implements AutoCloseable {

    static final AttributeKey<String> EVENT_KIND = AttributeKey.stringKey("payments.event.kind");
    /** What the delivery did: an {@link Outcome}'s name, as the metric's label spells it. */
    static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("payments.outcome");
    /** Why a message was moved aside (dead-lettered, a conflict, quarantined): its rejection reason. */
    static final AttributeKey<String> REASON = AttributeKey.stringKey("payments.rejection.reason");

    static final AttributeKey<Long> DEFERRED_DELIVERIES = AttributeKey.longKey("payments.deferred.deliveries");
    static final AttributeKey<Long> DEFERRED_FOR = AttributeKey.longKey("payments.deferred.delay_seconds");

    private static final DeliverySpan OFF = new DeliverySpan(null);

    private final Tracing.Traced traced;

    private DeliverySpan(Tracing.Traced traced) {
        this.traced = traced;
    }

    static DeliverySpan start(Tracing tracing, Message message) {
        if (!tracing.on()) {
            return OFF;
        }
        return new DeliverySpan(tracing.consumer(message, destinationOf(message), idOf(message)));
    }

    void event(DeliveredEvent event, String kind) {
        if (traced != null) {
            traced.span()
                    .setAttribute(Tracing.EVENT_ID, event.eventId().toString())
                    .setAttribute(EVENT_KIND, kind);
        }
    }

    void settled(DeliveryResult result) {
        if (traced != null && result instanceof DeliveryResult.MovedAside aside) {
            Span span = traced.span();
            span.setAttribute(REASON, aside.rejection().reason().name());
            if (aside.outcome() == Outcome.REJECTED) {
                // Dead-lettered: never applied, an operator's to look at.
                span.setStatus(
                        StatusCode.ERROR,
                        "dead-lettered: " + aside.rejection().reason().name());
            }
        }
    }

    void deferred(int delivered, Duration delay) {
        if (traced != null) {
            traced.span().setAttribute(DEFERRED_DELIVERIES, delivered).setAttribute(DEFERRED_FOR, delay.toSeconds());
        }
    }

    void failed(Throwable failure) {
        if (traced != null) {
            traced.span().recordException(failure);
            traced.span().setStatus(StatusCode.ERROR, "rolled back for redelivery");
        }
    }

    void outcome(Outcome outcome) {
        if (traced != null) {
            traced.span().setAttribute(OUTCOME, outcome.name().toLowerCase());
        }
    }

    @Override
    public void close() {
        if (traced != null) {
            traced.close();
        }
    }

    private static String destinationOf(Message message) {
        try {
            Destination destination = message.getJMSDestination();
            return destination instanceof Queue queue ? queue.getQueueName() : String.valueOf(destination);
        } catch (JMSException unreadable) {
            return "unknown";
        }
    }

    private static String idOf(Message message) {
        try {
            return message.getJMSMessageID();
        } catch (JMSException unreadable) {
            return null;
        }
    }
}
