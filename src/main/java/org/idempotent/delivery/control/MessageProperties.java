package org.idempotent.delivery.control;

import jakarta.jms.JMSException;
import jakarta.jms.Message;
import java.time.Instant;

/**
 * The properties the consumer sets on a message it moves aside (the dead-letter, conflicts and quarantine queues), by
 * which operators, scripts and a later delivery read it back; and what it reads from any message besides the body.
 */
public final class MessageProperties {

    /** Why the message was moved aside: a {@code Rejection.Reason}, and the detail in words. */
    public static final String REASON = "rejectionReason";

    public static final String DETAIL = "rejectionDetail";
    public static final String ORIGINAL_DESTINATION = "originalDestination";
    public static final String ORIGINAL_MESSAGE_ID = "originalMessageId";
    public static final String REJECTED_AT = "rejectedAt";
    /** Artemis's duplicate-detection property (Message.HDR_DUPLICATE_DETECTION_ID in its client API). */
    public static final String DUPLICATE_ID = "_AMQ_DUPL_ID";
    /**
     * The JMSTimestamp of the message as first sent, carried along by every forward (a forward re-sends, and a send
     * rewrites JMSTimestamp): how old a replayed dead letter really is.
     */
    public static final String ORIGINAL_TIMESTAMP = "originalTimestamp";
    /**
     * Properties a forward cannot carry under their own names, "name=value; ...": the JMS API sets only names that
     * are Java identifiers, and other protocols use others (STOMP's content-length, AMQP's message annotations such
     * as JMS_AMQP_MA_x-opt-jms-msg-type). Kept as text so that a forward loses nothing and never fails on them.
     */
    public static final String UNFORWARDED_PROPERTIES = "unforwardedProperties";

    /** The evidence: the event a conflicting or stale message carries (operators move one event's messages by it). */
    public static final String EVENT_ID = "eventId";

    /** A stale message's evidence: its ages and the horizon they passed. */
    public static final String OCCURRED_AGE_SECONDS = "occurredAgeSeconds";

    public static final String MESSAGE_AGE_SECONDS = "messageAgeSeconds";
    /** The age of a v7 event ID's own time, where the layout counts it (the table by event ID). */
    public static final String ID_AGE_SECONDS = "idAgeSeconds";

    public static final String HORIZON_SECONDS = "horizonSeconds";
    /** A payload mismatch's evidence: the fingerprint recorded first under the event ID, and this message's. */
    public static final String ORIGINAL_FINGERPRINT = "originalFingerprint";

    public static final String FINGERPRINT = "fingerprint";

    /** A message given up on as not applicable yet: how often it was delivered (its JMSXDeliveryCount). */
    public static final String DELIVERIES = "deliveries";

    /** The queue the message was consumed from, where a release from quarantine sends it back. */
    public static final String ORIGINAL_QUEUE = "originalQueue";

    private MessageProperties() {}

    /** When the message was first sent: its {@link #ORIGINAL_TIMESTAMP} if a forward carried one, else JMSTimestamp. */
    public static Instant firstSent(Message message) throws JMSException {
        long sent = message.propertyExists(ORIGINAL_TIMESTAMP)
                ? message.getLongProperty(ORIGINAL_TIMESTAMP)
                : message.getJMSTimestamp();
        return sent > 0 ? Instant.ofEpochMilli(sent) : null;
    }

    /** A received message for a log line: its ID and how many times it was delivered. */
    public static String describe(Message message) {
        try {
            return message.getJMSMessageID() + " (delivery " + message.getIntProperty("JMSXDeliveryCount") + ")";
        } catch (JMSException | RuntimeException e) {
            return "(unreadable: " + e + ")";
        }
    }
}
