package org.idempotent.delivery.control;

import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSConsumer;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.Queue;
import jakarta.jms.QueueBrowser;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.idempotent.Resources;

/**
 * The quarantine queue as an administrator works it: which stale messages of an event wait there, and their release
 * back to the queue each came from once an administrator decided that they are no duplicates.
 */
@ApplicationScoped
public class Quarantine {

    public static final String QUEUE = "QUARANTINE_QUEUE";

    private static final long REMOVE_TIMEOUT_MILLIS = 5000;

    @Resource(lookup = Resources.CONNECTION_FACTORY)
    ConnectionFactory connectionFactory;

    @Inject
    @ConfigProperty(name = QUEUE)
    String quarantineQueue;

    /** The queue a message quarantined before it carried its {@code originalQueue} came from: they all did. */
    @Inject
    @ConfigProperty(name = "PAYMENTS_QUEUE")
    String firstQueue;

    public String queue() {
        return quarantineQueue;
    }

    /** How many quarantined messages carry this event ID. */
    public int waiting(UUID eventId) throws JMSException {
        try (JMSContext jms = connectionFactory.createContext();
                QueueBrowser browser = jms.createBrowser(jms.createQueue(quarantineQueue), byEventId(eventId))) {
            return Collections.list(browser.getEnumeration()).size();
        }
    }

    /**
     * Moves the event's quarantined messages back to the queue each came from, body and properties as they are. Copy
     * first, remove second: a crash in between leaves the message in both queues, and moving it again is harmless,
     * since the copy carries the quarantine forward's duplicate ID and the broker drops a second one.
     *
     * @return how many were moved
     */
    public int release(UUID eventId) throws JMSException {
        int moved = 0;
        try (JMSContext jms = connectionFactory.createContext()) {
            Queue quarantine = jms.createQueue(quarantineQueue);
            List<Message> waiting;
            try (QueueBrowser browser = jms.createBrowser(quarantine, byEventId(eventId))) {
                waiting = Collections.list(browser.getEnumeration()).stream()
                        .map(Message.class::cast)
                        .toList();
            }
            for (Message message : waiting) {
                // Before the send, which gives the message object the ID of the copy.
                String quarantinedId = message.getJMSMessageID();
                String origin = message.propertyExists(MessageProperties.ORIGINAL_QUEUE)
                        ? message.getStringProperty(MessageProperties.ORIGINAL_QUEUE)
                        : firstQueue;
                jms.createProducer().send(jms.createQueue(origin), message);
                try (JMSConsumer remove = jms.createConsumer(quarantine, "JMSMessageID = '" + quarantinedId + "'")) {
                    if (remove.receive(REMOVE_TIMEOUT_MILLIS) != null) {
                        moved++;
                    }
                }
            }
        }
        return moved;
    }

    /** An event ID is a canonical UUID (hex and dashes), so it is safe inside a selector literal. */
    private static String byEventId(UUID eventId) {
        return MessageProperties.EVENT_ID + " = '" + eventId + "'";
    }
}
