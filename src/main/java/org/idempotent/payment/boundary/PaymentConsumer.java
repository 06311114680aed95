package org.idempotent.payment.boundary;

import jakarta.annotation.PostConstruct;
import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.EJB;
import jakarta.ejb.MessageDriven;
import jakarta.ejb.TransactionAttribute;
import jakarta.ejb.TransactionAttributeType;
import jakarta.inject.Inject;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.idempotent.payment.control.Consumed;
import org.idempotent.payment.control.DatabaseBreaker;
import org.idempotent.payment.control.DeadLetters;
import org.idempotent.payment.control.PaymentEvents;
import org.idempotent.payment.control.PaymentMetrics;
import org.idempotent.payment.control.Payments;
import org.idempotent.payment.entity.Outcome;
import org.idempotent.payment.entity.PaymentEvent;
import org.idempotent.payment.entity.RejectedMessage;
import org.idempotent.schema.boundary.SchemaMigration;

/**
 * Consumes the payments queue. Does no database work itself: it turns the message into a {@link PaymentEvent} and
 * hands it to {@link Payments}, whose transaction has committed before this method returns.
 *
 * <p>Not XA, and not a JMS transaction either: the adapter acknowledges the message after {@code onMessage} returns,
 * without waiting for the broker to confirm it, and on an exception rolls the session back, so that the broker
 * redelivers with its backoff and counts the attempt. Database first, acknowledgement second; the gap between them is
 * what the dedup table covers. An acknowledgement lost on the way (a broker crash before it reached the journal, a
 * dropped connection) is only a redelivery, which the dedup table answers as a duplicate: the acknowledgement needs no
 * durability of its own, so no session waits for a journal sync per message.
 */
@MessageDriven(
        activationConfig = {
            @ActivationConfigProperty(propertyName = "resourceAdapter", propertyValue = "artemis-ra"),
            @ActivationConfigProperty(propertyName = "destinationType", propertyValue = "jakarta.jms.Queue"),
            @ActivationConfigProperty(propertyName = "destination", propertyValue = "${MPCONFIG=PAYMENTS_QUEUE}"),
            @ActivationConfigProperty(propertyName = "useJNDI", propertyValue = "false"),
            @ActivationConfigProperty(propertyName = "useLocalTx", propertyValue = "false"),
            @ActivationConfigProperty(propertyName = "acknowledgeMode", propertyValue = "Auto-acknowledge"),
            @ActivationConfigProperty(propertyName = "maxSession", propertyValue = "${MPCONFIG=CONSUMER_MAX_SESSIONS}"),
            // Keep trying to connect while the broker is not (yet) reachable, instead of giving up after one try.
            @ActivationConfigProperty(propertyName = "setupAttempts", propertyValue = "-1"),
            @ActivationConfigProperty(propertyName = "setupInterval", propertyValue = "2000")
        })
public class PaymentConsumer implements MessageListener {

    private static final Logger LOG = Logger.getLogger(PaymentConsumer.class.getName());

    @EJB
    SchemaMigration schema;

    @Inject
    Payments payments;

    @Inject
    DeadLetters deadLetters;

    @Inject
    PaymentMetrics metrics;

    @Inject
    DatabaseBreaker database;

    @PostConstruct
    void awaitSchema() {
        schema.awaitMigrated();
    }

    @Override
    @TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED)
    public void onMessage(Message message) {
        // Before the delivery counts as started: waiting out an outage is not a stuck delivery.
        database.awaitClosed();
        long started = metrics.started();
        Outcome outcome = Outcome.FAILED;
        try {
            if (message.getJMSRedelivered()) {
                metrics.redelivered();
            }
            outcome = consume(message);
        } catch (JMSException | RuntimeException e) {
            LOG.log(
                    Level.WARNING,
                    "Message {0} failed (delivery {1}); the broker will redeliver it: {2}",
                    new Object[] {messageId(message), deliveryCount(message), rootCause(e)});
            throw e instanceof RuntimeException runtime ? runtime : new IllegalStateException(e);
        } finally {
            metrics.finished(started, outcome);
        }
    }

    private Outcome consume(Message message) throws JMSException {
        PaymentEvent event;
        Consumed consumed;
        try {
            event = PaymentEvents.read(message);
            consumed = payments.consume(event, DeadLetters.firstSent(message));
        } catch (RejectedMessage rejected) {
            String id = message.getJMSMessageID(); // the forward gives the message object its copy's ID
            deadLetters.forward(message, rejected.rejection());
            LOG.log(Level.WARNING, "Rejected message {0} ({1}), moved to {2}", new Object[] {
                id, rejected.rejection(), deadLetters.queue()
            });
            return Outcome.REJECTED;
        }
        if (consumed instanceof Consumed.MovedAside aside) {
            moveAside(message, aside);
        } else if (consumed instanceof Consumed.Duplicate duplicate) {
            if (duplicate.age() != null) {
                metrics.duplicateArrived(duplicate.age());
            }
            LOG.log(Level.FINE, "Duplicate event {0} acknowledged without effect", event.eventId());
        } else if (consumed.outcome() == Outcome.ALREADY_APPLIED) {
            LOG.log(
                    Level.INFO,
                    "Event {0} had no dedup record but was already applied to account {1}; not applied again",
                    new Object[] {event.eventId(), event.accountId()});
        }
        return consumed.outcome();
    }

    private void moveAside(Message message, Consumed.MovedAside aside) throws JMSException {
        String id = message.getJMSMessageID();
        if (aside.outcome() == Outcome.CONFLICT) {
            deadLetters.forwardConflict(message, aside.rejection(), aside.evidence());
        } else {
            deadLetters.forwardQuarantine(message, aside.rejection(), aside.evidence());
        }
        LOG.log(Level.WARNING, "Message {0} not applied ({1}), moved to {2}", new Object[] {
            id,
            aside.rejection(),
            aside.outcome() == Outcome.CONFLICT ? deadLetters.conflictsQueue() : deadLetters.quarantineQueue()
        });
    }

    private static String messageId(Message message) {
        try {
            return message.getJMSMessageID();
        } catch (JMSException e) {
            return "(unknown id)";
        }
    }

    private static Object deliveryCount(Message message) {
        try {
            return message.getIntProperty("JMSXDeliveryCount");
        } catch (JMSException | NumberFormatException e) {
            return "?";
        }
    }

    private static String rootCause(Throwable failure) {
        Throwable root = failure;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getClass().getSimpleName() + ": " + root.getMessage();
    }
}
