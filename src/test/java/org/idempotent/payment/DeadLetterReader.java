package org.idempotent.payment;

import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.QueueBrowser;
import jakarta.jms.Session;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory;
import org.idempotent.stack.Settings;

/** Takes a test's own messages (by selector) off the dead-letter queue. */
public final class DeadLetterReader implements AutoCloseable {

    private final Connection connection;
    private final Session session;
    private final String queue;

    public DeadLetterReader(Settings settings) throws JMSException {
        this(settings, settings.get("DEAD_LETTER_QUEUE"));
    }

    public DeadLetterReader(Settings settings, String queue) throws JMSException {
        connection = new ActiveMQConnectionFactory(
                        settings.brokerUrl(),
                        settings.get("BROKER_OPERATOR_USER"),
                        settings.get("BROKER_OPERATOR_PASSWORD"))
                .createConnection();
        connection.start();
        session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
        this.queue = queue;
    }

    /** Waits for {@code count} messages matching the selector; fewer after the timeout is a failure of the caller. */
    public List<Message> receive(String selector, int count, Duration timeout) throws JMSException {
        List<Message> received = new ArrayList<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        try (MessageConsumer consumer = session.createConsumer(session.createQueue(queue), selector)) {
            while (received.size() < count && System.nanoTime() < deadline) {
                Message message = consumer.receive(500);
                if (message != null) {
                    received.add(message);
                }
            }
            // Anything more than expected would be a message dead-lettered twice.
            Message extra = consumer.receive(1000);
            if (extra != null) {
                received.add(extra);
            }
        }
        if (received.size() != count) {
            throw new AssertionError(
                    "expected " + count + " dead letters for " + selector + ", got " + received.size());
        }
        return received;
    }

    /** How many messages match the selector, without taking them. */
    public int count(String selector) throws JMSException {
        try (QueueBrowser browser = session.createBrowser(session.createQueue(queue), selector)) {
            return Collections.list(browser.getEnumeration()).size();
        }
    }

    @Override
    public void close() throws JMSException {
        connection.close();
    }
}
