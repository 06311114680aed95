package org.idempotent.delivery.control;

import static org.idempotent.delivery.control.MessageProperties.DETAIL;
import static org.idempotent.delivery.control.MessageProperties.DUPLICATE_ID;
import static org.idempotent.delivery.control.MessageProperties.ORIGINAL_DESTINATION;
import static org.idempotent.delivery.control.MessageProperties.ORIGINAL_MESSAGE_ID;
import static org.idempotent.delivery.control.MessageProperties.ORIGINAL_QUEUE;
import static org.idempotent.delivery.control.MessageProperties.ORIGINAL_TIMESTAMP;
import static org.idempotent.delivery.control.MessageProperties.REASON;
import static org.idempotent.delivery.control.MessageProperties.REJECTED_AT;
import static org.idempotent.delivery.control.MessageProperties.UNFORWARDED_PROPERTIES;

import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.Queue;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.idempotent.Resources;
import org.idempotent.delivery.entity.Rejection;

/**
 * Moves a message that can never succeed to the dead-letter queue at once, with the reason attached, instead of
 * letting it burn redelivery attempts; a valid event that reused an ID for a different event goes to the conflicts
 * queue instead, and a stale one to the quarantine queue, where each waits for a human decision. The original body
 * and properties travel unchanged; what is added is named in {@link MessageProperties}.
 *
 * <p>Not atomic with the acknowledgement of the original (no XA): a crash in between redelivers the original and
 * forwards it a second time. The broker's duplicate detection drops that second copy: each forward carries
 * {@code _AMQ_DUPL_ID}, derived from the original message's ID, the target queue and the time of the rejection the
 * message already carries, if any. A redelivery after a crash is the same stored message, so it derives the same ID;
 * a dead letter that an operator replays carries its earlier {@code rejectedAt}, so rejected again it derives a new
 * ID and lands in the queue again instead of being dropped.
 */
@ApplicationScoped
public class DeadLetters {

    /** Artemis's scheduled-delivery property (Message.HDR_SCHEDULED_DELIVERY_TIME): when the broker delivers it. */
    static final String SCHEDULED_DELIVERY = "_AMQ_SCHED_DELIVERY";

    /** Words a JMS selector reserves, which JMS forbids as property names. */
    private static final Set<String> RESERVED =
            Set.of("NULL", "TRUE", "FALSE", "NOT", "AND", "OR", "BETWEEN", "LIKE", "IN", "IS", "ESCAPE");

    private static final Logger LOG = Logger.getLogger(DeadLetters.class.getName());

    @Resource(lookup = Resources.CONNECTION_FACTORY)
    ConnectionFactory connectionFactory;

    @Inject
    @ConfigProperty(name = "DEAD_LETTER_QUEUE")
    String deadLetterQueue;

    @Inject
    @ConfigProperty(name = "CONFLICTS_QUEUE")
    String conflictsQueue;

    @Inject
    @ConfigProperty(name = Quarantine.QUEUE)
    String quarantineQueue;

    /**
     * Moves the message to the queue of its outcome (the dead-letter queue for a rejected one, the conflicts or the
     * quarantine queue), with the rejection and its evidence attached as string properties.
     */
    public void moveAside(Message message, DeliveryResult.MovedAside aside) throws JMSException {
        String queue = switch (aside.outcome()) {
            case CONFLICT -> conflictsQueue;
            case QUARANTINED -> quarantineQueue;
            default -> deadLetterQueue;
        };
        String id = message.getJMSMessageID(); // the send gives the message object its copy's ID
        send(message, aside.rejection(), aside.evidence(), queue);
        LOG.log(Level.WARNING, "Message {0} not applied ({1}), moved to {2}", new Object[] {id, aside.rejection(), queue
        });
    }

    /**
     * Sends the message back to the queue it came from, to be delivered after {@code delay} (the broker's scheduled
     * delivery), numbered {@code deliveries}: an event not applicable yet, held for a later try while the delivery
     * that found it so is acknowledged. Its duplicate ID is derived from the delivered message and the number, so a
     * crash before that acknowledgement redelivers the message, and its second copy is dropped by the broker.
     */
    public void deferred(Message message, Duration delay, int deliveries) throws JMSException {
        String queue = ((Queue) message.getJMSDestination()).getQueueName();
        Map<String, Object> properties = carried(message);
        String forwardId = forwardId(message.getJMSMessageID(), queue, "deferral " + deliveries);
        long firstSent = message.getJMSTimestamp();
        message.clearProperties();
        for (Map.Entry<String, Object> property : properties.entrySet()) {
            message.setObjectProperty(property.getKey(), property.getValue());
        }
        if (!properties.containsKey(ORIGINAL_TIMESTAMP) && firstSent > 0) {
            message.setLongProperty(ORIGINAL_TIMESTAMP, firstSent);
        }
        message.setIntProperty(MessageProperties.DELIVERIES, deliveries);
        message.setLongProperty(SCHEDULED_DELIVERY, System.currentTimeMillis() + delay.toMillis());
        if (forwardId != null) {
            message.setStringProperty(DUPLICATE_ID, forwardId);
        }
        try (JMSContext jms = connectionFactory.createContext()) {
            jms.createProducer().send(jms.createQueue(queue), message);
        }
    }

    /** The properties a forward carries: every one a client may set, the rest kept as text. */
    private static Map<String, Object> carried(Message message) throws JMSException {
        Map<String, Object> properties = new LinkedHashMap<>();
        List<String> unforwarded = new ArrayList<>();
        for (Object property : Collections.list(message.getPropertyNames())) {
            String name = (String) property;
            // JMSX properties are set by the provider; a client may not set them. A duplicate ID the message came
            // with (a producer's, or an earlier forward's) is not this forward's.
            if (name.startsWith("JMSX") || name.equals(DUPLICATE_ID) || name.equals(SCHEDULED_DELIVERY)) {
                continue;
            }
            if (isPropertyName(name)) {
                properties.put(name, message.getObjectProperty(name));
            } else {
                unforwarded.add(name + "=" + message.getObjectProperty(name));
            }
        }
        if (!unforwarded.isEmpty()) {
            properties.put(UNFORWARDED_PROPERTIES, String.join("; ", unforwarded));
        }
        return properties;
    }

    private void send(Message message, Rejection rejection, Map<String, String> evidence, String queue)
            throws JMSException {
        Map<String, Object> properties = carried(message);
        String originalDestination = String.valueOf(message.getJMSDestination());
        String originalQueue = message.getJMSDestination() instanceof Queue consumed ? consumed.getQueueName() : null;
        String originalId = message.getJMSMessageID();
        String forwardId = forwardId(originalId, queue, properties.get(REJECTED_AT));
        long firstSent = message.getJMSTimestamp();
        // A received message has read-only properties until cleared; the body is resent as it came.
        message.clearProperties();
        for (Map.Entry<String, Object> property : properties.entrySet()) {
            message.setObjectProperty(property.getKey(), property.getValue());
        }
        message.setStringProperty(REASON, rejection.reason().name());
        message.setStringProperty(DETAIL, rejection.detail());
        message.setStringProperty(ORIGINAL_DESTINATION, originalDestination);
        if (originalQueue != null && !properties.containsKey(ORIGINAL_QUEUE)) {
            message.setStringProperty(ORIGINAL_QUEUE, originalQueue);
        }
        if (originalId != null) {
            message.setStringProperty(ORIGINAL_MESSAGE_ID, originalId);
        }
        message.setLongProperty(REJECTED_AT, System.currentTimeMillis());
        if (!properties.containsKey(ORIGINAL_TIMESTAMP) && firstSent > 0) {
            message.setLongProperty(ORIGINAL_TIMESTAMP, firstSent);
        }
        for (Map.Entry<String, String> item : evidence.entrySet()) {
            message.setStringProperty(item.getKey(), item.getValue());
        }
        if (forwardId != null) {
            message.setStringProperty(DUPLICATE_ID, forwardId);
        }
        try (JMSContext jms = connectionFactory.createContext()) {
            jms.createProducer().send(jms.createQueue(queue), message);
        }
    }

    /** Whether JMS lets a client set a property of this name. */
    static boolean isPropertyName(String name) {
        if (name.isEmpty()
                || !Character.isJavaIdentifierStart(name.charAt(0))
                || RESERVED.contains(name.toUpperCase())) {
            return false;
        }
        return name.chars().skip(1).allMatch(Character::isJavaIdentifierPart);
    }

    /**
     * The same for every delivery of one stored message to one queue; different once the message was replayed. None
     * for a message sent without a message ID (a producer that disabled IDs): it cannot be told apart from another.
     */
    static String forwardId(String originalId, String queue, Object previousRejection) {
        if (originalId == null) {
            return null;
        }
        String identity = originalId + "\n" + queue + "\n" + (previousRejection == null ? "" : previousRejection);
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(identity.getBytes(StandardCharsets.UTF_8));
            return "dead-letter:" + HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }
}
