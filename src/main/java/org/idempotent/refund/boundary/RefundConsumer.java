package org.idempotent.refund.boundary;

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
import org.idempotent.refund.control.Refunds;
import org.idempotent.schema.boundary.SchemaMigration;

/**
 * Consumes the refunds queue: each message goes to {@link Delivery#receive} as a refund, whose database transaction
 * has committed (or rolled back) before this method returns.
 *
 * <p>Acknowledged as {@code PaymentConsumer}'s messages are, for the same reasons (it says them): the database's
 * transaction first, the adapter's acknowledgement second, a redelivery in between answered by the dedup table. A
 * refund whose payment is not applied yet is acknowledged once a copy of it is scheduled on the queue for later.
 */
@MessageDriven(
        activationConfig = {
            @ActivationConfigProperty(propertyName = "resourceAdapter", propertyValue = "artemis-ra"),
            @ActivationConfigProperty(propertyName = "destinationType", propertyValue = "jakarta.jms.Queue"),
            @ActivationConfigProperty(propertyName = "destination", propertyValue = "${MPCONFIG=REFUNDS_QUEUE}"),
            @ActivationConfigProperty(propertyName = "useJNDI", propertyValue = "false"),
            @ActivationConfigProperty(propertyName = "useLocalTx", propertyValue = "false"),
            @ActivationConfigProperty(propertyName = "acknowledgeMode", propertyValue = "Auto-acknowledge"),
            @ActivationConfigProperty(propertyName = "maxSession", propertyValue = "${MPCONFIG=REFUNDS_MAX_SESSIONS}"),
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
public class RefundConsumer implements MessageListener {

    @EJB
    SchemaMigration schema;

    @Inject
    Delivery delivery;

    @Inject
    Refunds refunds;

    @PostConstruct
    void awaitSchema() {
        schema.awaitMigrated();
    }

    @Override
    @TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED)
    public void onMessage(Message message) {
        delivery.receive(message, refunds);
    }
}
