package org.idempotent.operations;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageProducer;
import jakarta.jms.QueueBrowser;
import jakarta.jms.Session;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory;
import org.idempotent.stack.Build;
import org.idempotent.stack.ChildProcess;
import org.idempotent.stack.Settings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The operator commands the documentation quotes (server-config/artemis/operate.sh), run as an operator would against the
 * test broker, on queues of their own: depth, browse, retry what the broker dead-lettered, return one event's conflict.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class OperatorScriptsIT {

    private static final Settings SETTINGS = Settings.fromEnvironment()
            .with("PAYMENTS_QUEUE", "it.operate")
            .with("DEAD_LETTER_QUEUE", "it.operate.dlq")
            .with("CONFLICTS_QUEUE", "it.operate.conflicts")
            .with("QUARANTINE_QUEUE", "it.operate.quarantine");
    private static final String RETURNED = UUID.randomUUID().toString();
    private static final String KEPT = UUID.randomUUID().toString();

    private static Connection operator;
    private static Session session;

    /** What the consumer and the broker would have left: two waiting, two dead letters of each kind, two conflicts. */
    @BeforeAll
    static void queuesAsAnOutageLeftThem() throws JMSException {
        operator = new ActiveMQConnectionFactory(
                        SETTINGS.brokerUrl(),
                        SETTINGS.get("BROKER_OPERATOR_USER"),
                        SETTINGS.get("BROKER_OPERATOR_PASSWORD"))
                .createConnection();
        operator.start();
        session = operator.createSession(false, Session.AUTO_ACKNOWLEDGE);
        send("it.operate", "{}", Map.of());
        send("it.operate", "{}", Map.of());
        // The broker's own dead letter after its last attempt carries the queue it came from.
        send(
                "it.operate.dlq",
                "{\"broker\":\"gave up\"}",
                Map.of("_AMQ_ORIG_QUEUE", "it.operate", "_AMQ_ORIG_ADDRESS", "it.operate"));
        send("it.operate.dlq", "not json", Map.of("rejectionReason", "MALFORMED_JSON"));
        send("it.operate.conflicts", "{}", Map.of("eventId", RETURNED, "rejectionReason", "PAYLOAD_MISMATCH"));
        send("it.operate.conflicts", "{}", Map.of("eventId", KEPT, "rejectionReason", "PAYLOAD_MISMATCH"));
        send("it.operate.quarantine", "{}", Map.of());
    }

    @AfterAll
    static void close() throws JMSException {
        if (operator != null) {
            operator.close();
        }
    }

    @Test
    @Order(1)
    void depthShowsEveryPaymentsQueueWithItsCount() throws Exception {
        String out = operate(SETTINGS.get("BROKER_OPERATOR_USER"), "depth");

        assertThat(out).containsPattern("(?m)^\\|NAME");
        assertThat(out).containsPattern(row("it.operate", 2));
        assertThat(out).containsPattern(row("it.operate.dlq", 2));
        assertThat(out).containsPattern(row("it.operate.conflicts", 2));
        assertThat(out).containsPattern(row("it.operate.quarantine", 1));
    }

    @Test
    @Order(2)
    void browseShowsTheDeadLettersWithTheirReasonsAndLeavesThem() throws Exception {
        String out = operate(SETTINGS.get("BROKER_OPERATOR_USER"), "browse", "it.operate.dlq");

        assertThat(out).contains("rejectionReason=MALFORMED_JSON", "browsed: 2 messages");
        assertThat(count("it.operate.dlq")).isEqualTo(2);
    }

    @Test
    @Order(3)
    void retryMovesBackOnlyWhatTheBrokerDeadLettered() throws Exception {
        operate(SETTINGS.get("BROKER_OPERATOR_USER"), "retry-dead-letters");

        assertThat(count("it.operate.dlq")).as("the rejected one stays").isEqualTo(1);
        assertThat(count("it.operate")).isEqualTo(3);
    }

    @Test
    @Order(4)
    void returnConflictMovesBackThatEventsConflictOnly() throws Exception {
        operate(SETTINGS.get("BROKER_OPERATOR_USER"), "return-conflict", RETURNED);

        assertThat(eventIds("it.operate.conflicts")).containsExactly(KEPT);
        assertThat(eventIds("it.operate")).contains(RETURNED);
    }

    @Test
    @Order(5)
    void aProducerCannotRunThem() throws Exception {
        ProcessBuilder builder = script("depth");
        builder.environment().put("BROKER_OPERATOR_USER", SETTINGS.get("BROKER_PRODUCER_USER"));
        builder.environment().put("BROKER_OPERATOR_PASSWORD", SETTINGS.get("BROKER_PRODUCER_PASSWORD"));
        Process process = builder.start();
        String out = new String(process.getInputStream().readAllBytes());
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();

        assertThat(process.exitValue()).as(out).isNotZero();
        assertThat(out).doesNotContain("|it.operate ");
    }

    private static String row(String queue, int messages) {
        // |NAME |ADDRESS |CONSUMER_COUNT |MESSAGE_COUNT |...
        return "(?m)^\\|" + queue.replace(".", "\\.") + "\\s*\\|[^|]*\\|\\s*\\d+\\s*\\|\\s*" + messages + "\\s*\\|";
    }

    private static String operate(String user, String... arguments) throws IOException, InterruptedException {
        ProcessBuilder builder = script(arguments);
        Process process = builder.start();
        String out = new String(process.getInputStream().readAllBytes());
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue())
                .as("operate.sh %s as %s:%n%s", String.join(" ", arguments), user, out)
                .isZero();
        return out;
    }

    private static ProcessBuilder script(String... arguments) {
        List<String> command = new ArrayList<>(List.of("bash", "server-config/artemis/operate.sh"));
        command.addAll(List.of(arguments));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        Map<String, String> environment = new HashMap<>(SETTINGS.asEnvironment());
        environment.put("ARTEMIS_HOME", Build.artemisHome().toString());
        // The artemis CLI's JVM, as every JVM the tests start (C1 only).
        environment.put("JAVA_ARGS_APPEND", String.join(" ", ChildProcess.extraJvmOptions()));
        builder.environment().putAll(environment);
        return builder;
    }

    private static void send(String queue, String body, Map<String, String> properties) throws JMSException {
        MessageProducer producer = session.createProducer(session.createQueue(queue));
        Message message = session.createTextMessage(body);
        for (Map.Entry<String, String> property : properties.entrySet()) {
            message.setStringProperty(property.getKey(), property.getValue());
        }
        producer.send(message);
        producer.close();
    }

    private static int count(String queue) throws JMSException {
        try (QueueBrowser browser = session.createBrowser(session.createQueue(queue))) {
            return Collections.list(browser.getEnumeration()).size();
        }
    }

    private static List<String> eventIds(String queue) throws JMSException {
        List<String> ids = new ArrayList<>();
        try (QueueBrowser browser = session.createBrowser(session.createQueue(queue))) {
            for (Object message : Collections.list(browser.getEnumeration())) {
                String id = ((Message) message).getStringProperty("eventId");
                if (id != null) {
                    ids.add(id);
                }
            }
        }
        return ids;
    }
}
