package org.idempotent.stack;

import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.StringReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory;

/**
 * A downstream service as the product's broker configuration provides for: it reads its own durable queue on the
 * announcement address (payments.applied.ledger, create-instance.sh's default), in the order the broker holds them.
 */
public final class AnnouncementSubscriber implements AutoCloseable {

    public static final String QUEUE = "payments.applied::payments.applied.ledger";

    /** One announcement as received, body and properties. */
    public record Received(
            UUID eventId,
            String accountId,
            long amountCents,
            long balanceCents,
            long sequence,
            String groupId,
            String duplicateId,
            UUID eventIdProperty,
            long sequenceProperty) {}

    private final Connection connection;
    private final Session session;
    private final MessageConsumer consumer;

    public AnnouncementSubscriber(Settings settings) throws JMSException {
        connection = new ActiveMQConnectionFactory(
                        settings.brokerHaUrl(),
                        settings.get("BROKER_OPERATOR_USER"),
                        settings.get("BROKER_OPERATOR_PASSWORD"))
                .createConnection();
        session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
        consumer = session.createConsumer(session.createQueue(QUEUE));
        connection.start();
    }

    /** Everything that arrives until nothing has for {@code quiet}. */
    public List<Received> receiveUntilQuiet(Duration quiet) throws JMSException {
        List<Received> received = new ArrayList<>();
        for (Message message = consumer.receive(quiet.toMillis());
                message != null;
                message = consumer.receive(quiet.toMillis())) {
            received.add(read(message));
        }
        return received;
    }

    private static Received read(Message message) throws JMSException {
        JsonObject body = Json.createReader(new StringReader(((TextMessage) message).getText()))
                .readObject();
        return new Received(
                UUID.fromString(body.getString("eventId")),
                body.getString("accountId"),
                body.getJsonNumber("amountCents").longValueExact(),
                body.getJsonNumber("balanceCents").longValueExact(),
                body.getJsonNumber("sequence").longValueExact(),
                message.getStringProperty("JMSXGroupID"),
                message.getStringProperty("_AMQ_DUPL_ID"),
                UUID.fromString(message.getStringProperty("eventId")),
                message.getLongProperty("sequence"));
    }

    /**
     * What a subscriber must be able to rely on, as a list of violations (empty: none): each event announced once;
     * per account, in the order received, each sequence number one more than the one before (the first 1, or what
     * came before this list) and each balance the one before plus the amount; the group ID the account; the
     * properties agreeing with the body.
     */
    public static List<String> violations(List<Received> received) {
        List<String> violations = new ArrayList<>();
        Map<UUID, Integer> seen = new HashMap<>();
        Map<String, Received> last = new HashMap<>();
        for (Received r : received) {
            if (seen.merge(r.eventId(), 1, Integer::sum) == 2) {
                violations.add("event " + r.eventId() + " announced more than once");
            }
            Received before = last.put(r.accountId(), r);
            if (before != null && r.sequence() != before.sequence() + 1) {
                violations.add(
                        "account " + r.accountId() + ": sequence " + r.sequence() + " after " + before.sequence());
            }
            long balance = (before == null
                            ? (r.sequence() == 1 ? 0 : r.balanceCents() - r.amountCents())
                            : before.balanceCents())
                    + r.amountCents();
            if (r.balanceCents() != balance) {
                violations.add("account " + r.accountId() + " sequence " + r.sequence() + ": balance "
                        + r.balanceCents() + " where the amounts add up to " + balance);
            }
            if (!r.accountId().equals(r.groupId())
                    || !r.eventId().equals(r.eventIdProperty())
                    || r.sequence() != r.sequenceProperty()
                    || r.duplicateId() == null) {
                violations.add("event " + r.eventId() + ": properties disagree with the body: " + r);
            }
        }
        return violations;
    }

    /** Per account, the last announcement received. */
    public static Map<String, Received> lastPerAccount(List<Received> received) {
        Map<String, Received> last = new HashMap<>();
        received.forEach(r -> last.put(r.accountId(), r));
        return last;
    }

    @Override
    public void close() throws JMSException {
        connection.close();
    }
}
