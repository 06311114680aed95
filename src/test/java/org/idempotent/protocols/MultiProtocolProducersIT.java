package org.idempotent.protocols;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import jakarta.jms.BytesMessage;
import jakarta.jms.Connection;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.qpid.jms.JmsConnectionFactory;
import org.idempotent.delivery.entity.Rejection;
import org.idempotent.fixtures.RunningConsumer;
import org.idempotent.loadgen.PaymentProducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Producers that speak the broker's other protocols on its one port: AMQP 1.0 (Qpid JMS: a TextMessage travels as an
 * AMQP value, a BytesMessage as a data section), STOMP (raw frames: without content-length the body arrives as text,
 * with it as bytes) and OpenWire (ActiveMQ Classic's client), next to the core protocol. Each sends text and binary
 * JSON events and resends another protocol's events: each event is applied once. Poison from each is dead-lettered
 * with its reason.
 */
class MultiProtocolProducersIT {

    private static final Duration PATIENCE = Duration.ofSeconds(60);

    @RegisterExtension
    static final RunningConsumer consumer = RunningConsumer.shared();

    /** One way of sending a body, text or bytes, with string properties. */
    private interface Sender extends AutoCloseable {
        void send(String body, boolean binary, Map<String, String> properties) throws Exception;
    }

    @Test
    void textAndBinaryEventsFromEveryProtocolAreAppliedOnceAndDuplicatesAcrossProtocolsAbsorbed() throws Exception {
        Map<String, Long> expected = new LinkedHashMap<>();
        List<String> protocols = List.of("core", "amqp", "stomp", "openwire");
        Map<String, List<String>> events = new LinkedHashMap<>();
        for (String protocol : protocols) {
            List<String> bodies = new ArrayList<>();
            for (boolean binary : new boolean[] {false, true}) {
                String account = "protocols-" + protocol + (binary ? "-bytes-" : "-text-") + UUID.randomUUID();
                long amount = 100 + bodies.size();
                bodies.add(PaymentProducer.json(UUID.randomUUID(), account, amount));
                expected.put(account, amount);
            }
            events.put(protocol, bodies);
        }
        long applied = consumer.metrics().outcome("applied");
        long duplicates = consumer.metrics().outcome("duplicate");

        for (int i = 0; i < protocols.size(); i++) {
            String protocol = protocols.get(i);
            // Each protocol sends its own events and then the previous protocol's again.
            List<String> again = events.get(protocols.get((i + protocols.size() - 1) % protocols.size()));
            try (Sender sender = sender(protocol)) {
                sender.send(events.get(protocol).get(0), false, Map.of());
                sender.send(events.get(protocol).get(1), true, Map.of());
                sender.send(again.get(0), false, Map.of());
                sender.send(again.get(1), true, Map.of());
            }
        }

        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(consumer.metrics().outcome("applied") - applied)
                        .isEqualTo(8));
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(consumer.metrics().outcome("duplicate") - duplicates)
                        .isEqualTo(8));
        expected.forEach((account, amount) ->
                assertThat(consumer.ledger().balance(account)).as(account).isEqualTo(amount));
    }

    @Test
    void poisonFromEveryProtocolIsDeadLetteredWithItsReason() throws Exception {
        String probe = UUID.randomUUID().toString();
        List<String> protocols = List.of("core", "amqp", "stomp", "openwire");
        for (String protocol : protocols) {
            try (Sender sender = sender(protocol)) {
                sender.send("this is not json", false, Map.of("probe", probe, "protocol", protocol + "-text"));
                sender.send("[\"not\", \"an object\"]", true, Map.of("probe", probe, "protocol", protocol + "-bytes"));
            }
        }

        Map<String, String> reasons = new LinkedHashMap<>();
        Map<String, String> unforwarded = new LinkedHashMap<>();
        try (Connection operator = new org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory(
                        consumer.settings().brokerUrl(),
                        consumer.settings().get("BROKER_OPERATOR_USER"),
                        consumer.settings().get("BROKER_OPERATOR_PASSWORD"))
                .createConnection()) {
            operator.start();
            Session session = operator.createSession(false, Session.AUTO_ACKNOWLEDGE);
            try (var deadLetters = session.createConsumer(
                    session.createQueue(consumer.settings().get("DEAD_LETTER_QUEUE")), "probe = '" + probe + "'")) {
                long deadline = System.nanoTime() + PATIENCE.toNanos();
                while (reasons.size() < 2 * protocols.size() && System.nanoTime() < deadline) {
                    Message dead = deadLetters.receive(500);
                    if (dead != null) {
                        reasons.put(dead.getStringProperty("protocol"), dead.getStringProperty("rejectionReason"));
                        unforwarded.put(
                                dead.getStringProperty("protocol"),
                                String.valueOf(dead.getStringProperty("unforwardedProperties")));
                    }
                }
            }
        }
        Map<String, String> expected = new LinkedHashMap<>();
        for (String protocol : protocols) {
            expected.put(protocol + "-text", Rejection.Reason.MALFORMED_JSON.name());
            expected.put(protocol + "-bytes", Rejection.Reason.NOT_A_JSON_OBJECT.name());
        }
        assertThat(reasons).isEqualTo(expected);
        // STOMP's content-length is no JMS property name: the forward keeps it as text instead of failing on it.
        assertThat(unforwarded.get("stomp-bytes")).contains("content-length=");
    }

    /**
     * The broker's size limit (1 MiB, the MessageSizeLimit plugin) holds for every protocol, not only the core one
     * that OversizedMessagesIT sends with: a 2 MiB body from AMQP, STOMP or OpenWire is refused at the send by that
     * limit (the broker logs each refusal; AMQP's and OpenWire's clients are told its reason, STOMP's only that the send
     * failed), and so never reaches the consumer.
     */
    @Test
    void oversizedSendsFromEveryOtherProtocolAreRefusedAtTheBroker() throws Exception {
        String oversized = "z".repeat(2 * 1024 * 1024);
        long rejected = consumer.metrics().outcome("rejected");
        for (String protocol : List.of("amqp", "stomp", "openwire")) {
            for (boolean binary : new boolean[] {false, true}) {
                String send = protocol + (binary ? " bytes" : " text") + " send of 2 MiB";
                long refusedBefore = sizeLimitRefusals();
                try (Sender sender = sender(protocol)) {
                    assertThatThrownBy(() -> sender.send(oversized, binary, Map.of()))
                            .as(send)
                            .isInstanceOfAny(JMSException.class, IOException.class)
                            .satisfies(refusal -> {
                                // Artemis's STOMP frame says only "Error sending message"; the others carry the reason.
                                if (!protocol.equals("stomp")) {
                                    assertThat(messages(refusal))
                                            .as("%s: the reason the client was given", send)
                                            .contains(SIZE_LIMIT_REASON);
                                }
                            });
                }
                await().atMost(Duration.ofSeconds(10))
                        .untilAsserted(() -> assertThat(sizeLimitRefusals())
                                .as("%s: refused by the broker's size limit (its log)", send)
                                .isEqualTo(refusedBefore + 1));
            }
        }
        // A valid event after them, over the same protocols' queue, overtakes nothing refused: had a refused body
        // been stored, it would be handled first and counted as rejected (BODY_TOO_LARGE).
        String account = "protocols-after-oversized-" + UUID.randomUUID();
        try (Sender sender = sender("core")) {
            sender.send(PaymentProducer.json(UUID.randomUUID(), account, 77), false, Map.of());
        }
        await().atMost(PATIENCE).until(() -> consumer.ledger().balance(account) != null);
        assertThat(consumer.metrics().outcome("rejected") - rejected)
                .as("refused bodies that reached the consumer anyway")
                .isZero();
    }

    /** The size limit's refusals of a send to the shared queue, as the broker logged them (MessageSizeLimit). */
    private static long sizeLimitRefusals() throws IOException {
        String queue = " to " + consumer.settings().get("PAYMENTS_QUEUE") + " from ";
        try (var lines = Files.lines(consumer.settings().stackDir().resolve("broker.log"))) {
            return lines.filter(line -> line.contains("MessageSizeLimit")
                            && line.contains("Refused a message of")
                            && line.contains(queue))
                    .count();
        }
    }

    /** The messages of a throwable and its causes: a client may wrap the broker's reason. */
    private static String messages(Throwable thrown) {
        StringBuilder messages = new StringBuilder();
        for (Throwable cause = thrown; cause != null; cause = cause.getCause()) {
            messages.append(cause).append('\n');
        }
        return messages.toString();
    }

    private static final String SIZE_LIMIT_REASON = "refused: the broker accepts at most 1048576 bytes";

    private static Sender sender(String protocol) throws Exception {
        String user = consumer.settings().get("BROKER_PRODUCER_USER");
        String password = consumer.settings().get("BROKER_PRODUCER_PASSWORD");
        String hostPort = consumer.settings().get("BROKER_HOST") + ":"
                + consumer.settings().get("BROKER_PORT");
        return switch (protocol) {
            case "core" ->
                jms(new org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory(
                        "tcp://" + hostPort, user, password));
            case "amqp" -> jms(new JmsConnectionFactory(user, password, "amqp://" + hostPort));
            // The broker sends no advisories (acceptor: supportAdvisory=false), so the client need not watch them.
            case "openwire" ->
                jms(new org.apache.activemq.ActiveMQConnectionFactory(
                        user, password, "tcp://" + hostPort + "?jms.watchTopicAdvisories=false"));
            case "stomp" ->
                new Stomp(
                        consumer.settings().get("BROKER_HOST"),
                        consumer.settings().getInt("BROKER_PORT"),
                        user,
                        password,
                        consumer.settings().get("PAYMENTS_QUEUE"));
            default -> throw new IllegalArgumentException(protocol);
        };
    }

    private static Sender jms(ConnectionFactory factory) throws JMSException {
        Connection connection = factory.createConnection();
        Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
        MessageProducer producer =
                session.createProducer(session.createQueue(consumer.settings().get("PAYMENTS_QUEUE")));
        producer.setDeliveryMode(DeliveryMode.PERSISTENT);
        return new Sender() {
            @Override
            public void send(String body, boolean binary, Map<String, String> properties) throws JMSException {
                Message message;
                if (binary) {
                    BytesMessage bytes = session.createBytesMessage();
                    bytes.writeBytes(body.getBytes(UTF_8));
                    message = bytes;
                } else {
                    message = session.createTextMessage(body);
                }
                for (Map.Entry<String, String> property : properties.entrySet()) {
                    message.setStringProperty(property.getKey(), property.getValue());
                }
                producer.send(message);
            }

            @Override
            public void close() throws JMSException {
                connection.close();
            }
        };
    }

    /** STOMP 1.2 over a plain socket: every SEND asks for a receipt, so a returned send is on the broker. */
    private static final class Stomp implements Sender {

        private final Socket socket;
        private final OutputStream out;
        private final InputStream in;
        private final String destination;
        private int receipts;
        /** The broker answered a send with an error, after which it closes the connection. */
        private boolean refused;

        Stomp(String host, int port, String login, String passcode, String destination) throws IOException {
            this.socket = new Socket(host, port);
            this.out = socket.getOutputStream();
            this.in = socket.getInputStream();
            this.destination = destination;
            write(
                    "CONNECT\naccept-version:1.2\nhost:" + host + "\nlogin:" + login + "\npasscode:" + passcode
                            + "\n\n",
                    new byte[0]);
            String connected = readFrame();
            if (!connected.startsWith("CONNECTED")) {
                throw new IOException("STOMP login refused: " + connected);
            }
        }

        @Override
        public void send(String body, boolean binary, Map<String, String> properties) throws IOException {
            String receipt = "r" + ++receipts;
            StringBuilder headers = new StringBuilder(
                    "SEND\ndestination:" + destination + "\npersistent:true\nreceipt:" + receipt + "\n");
            byte[] bytes = body.getBytes(UTF_8);
            if (binary) {
                headers.append("content-length:").append(bytes.length).append('\n');
            }
            properties.forEach((name, value) ->
                    headers.append(name).append(':').append(value).append('\n'));
            String answer;
            try {
                write(headers.append('\n').toString(), bytes);
                answer = readFrame();
            } catch (IOException e) {
                refused = true;
                throw e;
            }
            if (!answer.startsWith("RECEIPT") || !answer.contains("receipt-id:" + receipt)) {
                // An ERROR frame: the broker closes the connection after it.
                refused = true;
                throw new IOException("STOMP send not confirmed: " + answer);
            }
        }

        private void write(String headers, byte[] body) throws IOException {
            out.write(headers.getBytes(UTF_8));
            out.write(body);
            out.write(0);
            out.flush();
        }

        private String readFrame() throws IOException {
            ByteArrayOutputStream frame = new ByteArrayOutputStream();
            int b;
            while ((b = in.read()) != 0) {
                if (b < 0) {
                    throw new IOException("STOMP connection closed after: " + frame.toString(UTF_8));
                }
                if (frame.size() > 0 || (b != '\n' && b != '\r')) { // heart-beats between frames
                    frame.write(b);
                }
            }
            return frame.toString(UTF_8);
        }

        @Override
        public void close() throws IOException {
            try {
                if (!refused) {
                    write("DISCONNECT\n\n", new byte[0]);
                }
            } finally {
                socket.close();
            }
        }
    }
}
