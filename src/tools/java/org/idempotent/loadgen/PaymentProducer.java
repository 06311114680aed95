package org.idempotent.loadgen;

import jakarta.jms.BytesMessage;
import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.UUID;
import org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory;
import org.idempotent.stack.Settings;

/** Sends payment events to the broker as a producer application would: persistent messages, Artemis core client. */
public final class PaymentProducer implements AutoCloseable {

    private final Connection connection;
    private final Session session;
    private final MessageProducer producer;
    /** Sends to any queue, in the same session: a batch of payments and refunds commits as one. */
    private MessageProducer anyQueue;

    public PaymentProducer(Settings settings) throws JMSException {
        this(settings, settings.get("PAYMENTS_QUEUE"));
    }

    public PaymentProducer(Settings settings, String queue) throws JMSException {
        this(settings, queue, false);
    }

    /** Transacted: messages are delivered at {@link #commit()}, in one synced broker write per batch. */
    public PaymentProducer(Settings settings, String queue, boolean transacted) throws JMSException {
        this(settings, settings.brokerHaUrl(), queue, transacted);
    }

    /** To the brokers {@code url} names (one of {@link Settings}'s), as the producer role of {@code settings}. */
    public PaymentProducer(Settings settings, String url, String queue, boolean transacted) throws JMSException {
        ActiveMQConnectionFactory factory = new ActiveMQConnectionFactory(
                url, settings.get("BROKER_PRODUCER_USER"), settings.get("BROKER_PRODUCER_PASSWORD"));
        connection = factory.createConnection();
        session = connection.createSession(
                transacted, transacted ? Session.SESSION_TRANSACTED : Session.AUTO_ACKNOWLEDGE);
        producer = session.createProducer(session.createQueue(queue));
        producer.setDeliveryMode(DeliveryMode.PERSISTENT);
    }

    public static String json(UUID eventId, String accountId, long amountCents) {
        return "{\"eventId\":\"" + eventId + "\",\"accountId\":\"" + accountId + "\",\"amountCents\":" + amountCents
                + "}";
    }

    /** A refund of {@code amountCents} of the payment {@code paymentEventId} (message-contract.md). */
    public static String refundJson(UUID eventId, UUID paymentEventId, long amountCents) {
        return "{\"eventId\":\"" + eventId + "\",\"paymentEventId\":\"" + paymentEventId + "\",\"amountCents\":"
                + amountCents + "}";
    }

    /** A payment of contract version 2 when {@code occurredAt} is given, else of version 1. */
    public static String json(UUID eventId, String accountId, long amountCents, Instant occurredAt) {
        String json = json(eventId, accountId, amountCents);
        return occurredAt == null
                ? json
                : json.substring(0, json.length() - 1) + ",\"occurredAt\":\"" + occurredAt + "\"}";
    }

    public void sendText(String body) throws JMSException {
        producer.send(session.createTextMessage(body));
    }

    public void sendBytes(byte[] body) throws JMSException {
        BytesMessage message = session.createBytesMessage();
        message.writeBytes(body);
        producer.send(message);
    }

    public void sendBytes(String body) throws JMSException {
        sendBytes(body.getBytes(StandardCharsets.UTF_8));
    }

    /** For messages a test builds itself (other body types, properties). */
    public Session session() {
        return session;
    }

    public void send(Message message) throws JMSException {
        producer.send(message);
    }

    /** Sends to {@code queue} instead of the producer's own. */
    public void send(String queue, Message message) throws JMSException {
        if (anyQueue == null) {
            anyQueue = session.createProducer(null);
            anyQueue.setDeliveryMode(DeliveryMode.PERSISTENT);
        }
        anyQueue.send(session.createQueue(queue), message);
    }

    public void commit() throws JMSException {
        session.commit();
    }

    @Override
    public void close() throws JMSException {
        connection.close();
    }
}
