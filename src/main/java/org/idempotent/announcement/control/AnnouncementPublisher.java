package org.idempotent.announcement.control;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.StatusCode;
import jakarta.annotation.PostConstruct;
import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.JMSRuntimeException;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.metrics.Counter;
import org.eclipse.microprofile.metrics.MetricRegistry;
import org.idempotent.Resources;
import org.idempotent.announcement.entity.AnnouncementMessage;
import org.idempotent.telemetry.Tracing;

/**
 * Sends the relay's batches to the announcement address: one broker transaction per batch, one journal sync for it
 * instead of one per message. Each message carries its row's {@link AnnouncementMessage#duplicateId()}, so the broker
 * drops a batch published again after a crash between its send and its mark. A duplicate in a transacted batch makes
 * the broker refuse the whole batch; the batch then goes again message by message, outside a transaction, where the
 * broker refuses each duplicate alone and it counts as published, so a batch holding one never loops.
 */
@ApplicationScoped
public class AnnouncementPublisher {

    /** Configuration key: the topic (multicast address) announcements go to. */
    public static final String ADDRESS = "ANNOUNCEMENT_ADDRESS";

    private static final Logger LOG = Logger.getLogger(AnnouncementPublisher.class.getName());

    private static final AttributeKey<Long> SEQUENCE = AttributeKey.longKey("payments.announcement.sequence");
    /** More than 1 for a resend: a relay that stopped mid-window publishes the rest of it again. */
    private static final AttributeKey<Long> SEND_ATTEMPT = AttributeKey.longKey("payments.announcement.send_attempt");

    @Resource(lookup = Resources.CONNECTION_FACTORY)
    ConnectionFactory connectionFactory;

    // The value itself, read once: a Provider's get() would make a @Dependent instance of the config producer on
    // every pass, which CDI keeps as a dependent object of this application-scoped bean for good.
    @Inject
    @ConfigProperty(name = ADDRESS)
    String address;

    @Inject
    MetricRegistry metrics;

    @Inject
    Tracing tracing;

    private Counter published;
    private Counter republished;

    @PostConstruct
    void registerMetrics() {
        published = metrics.counter("announcement.published");
        republished = metrics.counter("announcement.republished");
    }

    /** A relay pass's broker session; every batch published through it is committed before the call returns. */
    public final class Publication implements AutoCloseable {

        private final jakarta.jms.Connection broker;
        private final Session transacted;
        private final Topic topic;
        private final String destination;

        private Publication() throws JMSException {
            // The classic API: the adapter gives a JMSContext no local transaction outside JTA, a Session it does
            // (AllowLocalTransactions on the pool).
            broker = connectionFactory.createConnection();
            try {
                transacted = broker.createSession(Session.SESSION_TRANSACTED);
                destination = address;
                topic = transacted.createTopic(destination);
            } catch (JMSException | RuntimeException e) {
                broker.close();
                throw e;
            }
        }

        /** @throws JMSRuntimeException if the broker took none of the batch, or not all of it */
        public void publish(List<AnnouncementMessage> batch) {
            int dropped;
            try {
                dropped = publishTransacted(batch) ? 0 : publishOneByOne(batch);
            } catch (JMSException e) {
                throw new JMSRuntimeException(e.getMessage(), e.getErrorCode(), e);
            }
            published.inc(batch.size() - dropped);
            republished.inc(
                    batch.stream().filter(AnnouncementMessage::republished).count());
        }

        /** False if the broker refused the batch (a resend in it; a broken connection fails the fallback as well). */
        private boolean publishTransacted(List<AnnouncementMessage> batch) throws JMSException {
            try {
                try (MessageProducer producer = transacted.createProducer(topic)) {
                    producer.setDeliveryMode(DeliveryMode.PERSISTENT);
                    for (AnnouncementMessage announcement : batch) {
                        send(transacted, producer, announcement, destination);
                    }
                }
                transacted.commit();
                return true;
            } catch (JMSException e) {
                LOG.log(
                        Level.INFO,
                        "Relay batch of {0} refused by the broker ({1}); sending it message by message",
                        new Object[] {batch.size(), e.getMessage()});
                transacted.rollback();
                return false;
            }
        }

        /** @return the messages the broker had already (published before a crash that left them unmarked) */
        private int publishOneByOne(List<AnnouncementMessage> batch) throws JMSException {
            int dropped = 0;
            // A connection of its own: the adapter allows one session per connection.
            try (jakarta.jms.Connection another = connectionFactory.createConnection();
                    Session single = another.createSession(Session.AUTO_ACKNOWLEDGE);
                    MessageProducer producer = single.createProducer(topic)) {
                producer.setDeliveryMode(DeliveryMode.PERSISTENT);
                for (AnnouncementMessage announcement : batch) {
                    try {
                        send(single, producer, announcement, destination);
                    } catch (JMSException refused) {
                        if (!isDuplicate(refused)) {
                            throw refused;
                        }
                        dropped++;
                    }
                }
            }
            return dropped;
        }

        @Override
        public void close() throws JMSException {
            broker.close();
        }
    }

    public Publication open() throws JMSException {
        return new Publication();
    }

    /** The broker's duplicate detection refused the message (Artemis's ActiveMQDuplicateIdException). */
    static boolean isDuplicate(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (cause.getClass().getSimpleName().equals("ActiveMQDuplicateIdException")) {
                return true;
            }
        }
        return false;
    }

    /**
     * One announcement, in a PRODUCER span of the trace its row was written in (parented, not linked: the trace is the
     * payment's whole path, and the relay publishes within a second of the commit unless a long transaction holds it
     * back, which the span's start then shows); the message carries the span's context for its subscribers.
     */
    private void send(Session session, MessageProducer producer, AnnouncementMessage announcement, String destination)
            throws JMSException {
        Tracing.Traced traced = tracing.producer(destination, announcement.trace());
        try {
            TextMessage message = message(session, announcement);
            tracing.inject(message, announcement.trace());
            if (traced != null) {
                traced.span()
                        .setAttribute(Tracing.EVENT_ID, announcement.eventId().toString())
                        .setAttribute(SEQUENCE, announcement.sequence())
                        .setAttribute(SEND_ATTEMPT, announcement.sendAttempts());
            }
            producer.send(message);
        } catch (JMSException | RuntimeException e) {
            if (traced != null) {
                traced.span().recordException(e);
                traced.span().setStatus(StatusCode.ERROR, e.getClass().getSimpleName());
            }
            throw e;
        } finally {
            if (traced != null) {
                traced.close();
            }
        }
    }

    /** The announcement as published: its JSON body, grouped by account, with its duplicate-detection ID. */
    public static TextMessage message(Session session, AnnouncementMessage announcement) throws JMSException {
        TextMessage message = session.createTextMessage(announcement.json());
        message.setStringProperty("JMSXGroupID", announcement.accountId());
        message.setStringProperty("_AMQ_DUPL_ID", announcement.duplicateId());
        message.setStringProperty(
                AnnouncementMessage.EVENT_ID, announcement.eventId().toString());
        message.setStringProperty(AnnouncementMessage.ACCOUNT_ID, announcement.accountId());
        message.setLongProperty(AnnouncementMessage.SEQUENCE, announcement.sequence());
        return message;
    }
}
