package org.idempotent.payment.boundary;

import jakarta.annotation.PostConstruct;
import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.EJB;
import jakarta.ejb.MessageDriven;
import jakarta.ejb.TransactionAttribute;
import jakarta.ejb.TransactionAttributeType;
import jakarta.inject.Inject;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;
import org.idempotent.delivery.control.Delivery;
import org.idempotent.payment.control.Payments;
import org.idempotent.schema.boundary.SchemaMigration;

/**
 * Consumes the payments queue: each message goes to {@link Delivery#receive} as a payment, whose database transaction
 * has committed (or rolled back) before this method returns.
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
            @ActivationConfigProperty(
                    propertyName = "consumerWindowSize",
                    propertyValue = "${MPCONFIG=CONSUMER_WINDOW_BYTES}"),
            // Keep trying to connect while the broker is not (yet) reachable, instead of giving up after one try.
            @ActivationConfigProperty(propertyName = "setupAttempts", propertyValue = "-1"),
            @ActivationConfigProperty(propertyName = "setupInterval", propertyValue = "2000"),
            // On a cluster of live brokers: spread the sessions over the live nodes again when one leaves or joins.
            @ActivationConfigProperty(
                    propertyName = "rebalanceConnections",
                    propertyValue = "${MPCONFIG=CONSUMER_REBALANCE_CONNECTIONS}")
        })
public class PaymentConsumer implements MessageListener {

    @EJB
    SchemaMigration schema;

    @Inject
    Delivery delivery;

    @Inject
    Payments payments;

    @PostConstruct
    void awaitSchema() {
        schema.awaitMigrated();
    }

    @Override
    @TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED)
    public void onMessage(Message message) {
        delivery.receive(message, payments);
    }
}
