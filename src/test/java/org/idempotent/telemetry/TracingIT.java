package org.idempotent.telemetry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory;
import org.idempotent.fixtures.AnnouncementSubscriber;
import org.idempotent.fixtures.RunningConsumer;
import org.idempotent.loadgen.PaymentProducer;
import org.idempotent.stack.OtlpReceiver;
import org.idempotent.stack.OtlpReceiver.ReceivedSpan;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * One trace per payment and per refund, as an operator's collector receives it: a Payara Micro with tracing on
 * exports over OTLP/HTTP to a receiver in this JVM ({@link OtlpReceiver}), and each test sends with a known W3C
 * traceparent, as a traced producer would, then follows that trace: the delivery's CONSUMER span, its statements,
 * the relay's PRODUCER span, and the traceparent a subscriber of the announcement continues from.
 */
class TracingIT {

    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private static final String ADDRESS = "payments.applied";

    private static final OtlpReceiver receiver = receiver();

    @RegisterExtension
    static final RunningConsumer consumer = RunningConsumer.on("tracing-it", "it.tracing")
            .with("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
            // Batches leave every 200 ms instead of 5 s: the assertions wait for less.
            .with("OTEL_BSP_SCHEDULE_DELAY", "200");

    @AfterAll
    static void stopReceiver() {
        receiver.close();
    }

    @Test
    void aPaymentsTraceRunsFromItsProducerThroughTheOutboxToItsSubscriber() throws Exception {
        Traceparent producer = Traceparent.random();
        UUID payment = UUID.randomUUID();

        try (Subscriber subscriber = new Subscriber(payment)) {
            send(queue(), PaymentProducer.json(payment, account(), 1250), producer);

            ReceivedSpan delivery = awaitSpan(producer.traceId(), "CONSUMER", payment);
            assertThat(delivery.parentSpanId())
                    .as("parented on the producer's span")
                    .isEqualTo(producer.spanId());
            assertThat(delivery.name()).isEqualTo(queue() + " process");
            assertThat(delivery.service()).isEqualTo("payment-consumer");
            assertThat(delivery.attributes())
                    .containsEntry("messaging.system", "activemq")
                    .containsEntry("messaging.destination.name", queue())
                    .containsEntry("messaging.operation", "process")
                    .containsEntry("payments.event.kind", "payment")
                    .containsEntry("payments.outcome", "applied")
                    .containsKey("messaging.message.id");
            ReceivedSpan insert = awaitChild(delivery, "INSERT processed_events");
            assertThat(insert.kind()).isEqualTo("CLIENT");
            assertThat(insert.attributes()).containsEntry("db.system", "postgresql");
            ReceivedSpan apply = awaitChild(delivery, "apply payment");

            ReceivedSpan publish = awaitSpan(producer.traceId(), "PRODUCER", payment);
            assertThat(publish.parentSpanId())
                    .as("the relay's publish is parented on the transaction that wrote the outbox row")
                    .isEqualTo(apply.spanId());
            assertThat(publish.name()).isEqualTo(ADDRESS + " publish");

            Traceparent received = Traceparent.parse(subscriber.announcement().getStringProperty("traceparent"));
            assertThat(received.traceId())
                    .as("the subscriber continues the payment's trace")
                    .isEqualTo(producer.traceId());
            assertThat(received.spanId()).as("from the relay's publish").isEqualTo(publish.spanId());
        }
    }

    @Test
    void aDuplicatesSpanSaysSoAndNothingIsPublishedAgain() throws Exception {
        Traceparent producer = Traceparent.random();
        UUID payment = UUID.randomUUID();
        String body = PaymentProducer.json(payment, account(), 700);
        send(queue(), body, producer);
        awaitSpan(producer.traceId(), "PRODUCER", payment);

        Traceparent resend = producer.resent();
        send(queue(), body, resend);

        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(spans(producer.traceId(), "CONSUMER", payment))
                        .extracting(span -> span.attribute("payments.outcome"))
                        .containsExactlyInAnyOrder("applied", "duplicate"));
        ReceivedSpan duplicate = spans(producer.traceId(), "CONSUMER", payment).stream()
                .filter(span -> "duplicate".equals(span.attribute("payments.outcome")))
                .findFirst()
                .orElseThrow();
        assertThat(duplicate.parentSpanId()).isEqualTo(resend.spanId());
        assertThat(duplicate.status()).isNotEqualTo("ERROR");
        await().during(Duration.ofSeconds(2))
                .atMost(Duration.ofSeconds(5))
                .until(() -> spans(producer.traceId(), "PRODUCER", payment).size() == 1);
    }

    @Test
    void aPoisonMessagesSpanSaysDeadLetteredWithItsReason() throws Exception {
        Traceparent producer = Traceparent.random();
        send(queue(), "{\"eventId\": ", producer);

        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(receiver.trace(producer.traceId()))
                        .anySatisfy(span -> {
                            assertThat(span.kind()).isEqualTo("CONSUMER");
                            assertThat(span.attribute("payments.outcome")).isEqualTo("rejected");
                            assertThat(span.attribute("payments.rejection.reason"))
                                    .isEqualTo("MALFORMED_JSON");
                            assertThat(span.status()).isEqualTo("ERROR");
                            assertThat(span.statusMessage()).isEqualTo("dead-lettered: MALFORMED_JSON");
                        }));
    }

    @Test
    void aRefundsTraceRunsThroughTheOutboxToItsSubscriberToo() throws Exception {
        String account = account();
        UUID payment = UUID.randomUUID();
        Traceparent paid = Traceparent.random();
        send(queue(), PaymentProducer.json(payment, account, 1000), paid);
        awaitSpan(paid.traceId(), "PRODUCER", payment);
        Traceparent producer = Traceparent.random();
        UUID refund = UUID.randomUUID();

        try (Subscriber subscriber = new Subscriber(refund)) {
            send(consumer.settings().get("REFUNDS_QUEUE"), PaymentProducer.refundJson(refund, payment, 300), producer);

            ReceivedSpan delivery = awaitSpan(producer.traceId(), "CONSUMER", refund);
            assertThat(delivery.parentSpanId()).isEqualTo(producer.spanId());
            assertThat(delivery.attributes())
                    .containsEntry(
                            "messaging.destination.name", consumer.settings().get("REFUNDS_QUEUE"))
                    .containsEntry("payments.event.kind", "refund")
                    .containsEntry("payments.outcome", "applied");
            ReceivedSpan apply = awaitChild(delivery, "apply refund");
            ReceivedSpan publish = awaitSpan(producer.traceId(), "PRODUCER", refund);
            assertThat(publish.parentSpanId()).isEqualTo(apply.spanId());

            Message announcement = subscriber.announcement();
            assertThat(Traceparent.parse(announcement.getStringProperty("traceparent")))
                    .isEqualTo(new Traceparent(producer.traceId(), publish.spanId()));
        }
    }

    @Test
    void aMessageWithoutATraceparentStartsATraceOfItsOwn() throws Exception {
        UUID payment = UUID.randomUUID();
        send(queue(), PaymentProducer.json(payment, account(), 100), null);

        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(receiver.spans())
                        .filteredOn(span -> payment.toString().equals(span.attribute("payments.event.id")))
                        .filteredOn(span -> span.kind().equals("CONSUMER"))
                        .singleElement()
                        .satisfies(span -> assertThat(span.parentSpanId()).isEmpty()));
    }

    private static ReceivedSpan awaitSpan(String traceId, String kind, UUID event) {
        return await("a " + kind + " span of event " + event + " in trace " + traceId)
                .atMost(PATIENCE)
                .until(() -> spans(traceId, kind, event).stream().findFirst(), Optional::isPresent)
                .orElseThrow();
    }

    private static List<ReceivedSpan> spans(String traceId, String kind, UUID event) {
        return receiver.trace(traceId).stream()
                .filter(span -> span.kind().equals(kind))
                .filter(span -> event.toString().equals(span.attribute("payments.event.id")))
                .toList();
    }

    private static ReceivedSpan awaitChild(ReceivedSpan parent, String name) {
        return await("a span " + name + " under " + parent.name())
                .atMost(PATIENCE)
                .until(
                        () -> receiver.trace(parent.traceId()).stream()
                                .filter(span -> span.parentSpanId().equals(parent.spanId()))
                                .filter(span -> span.name().equals(name))
                                .findFirst(),
                        Optional::isPresent)
                .orElseThrow();
    }

    private static void send(String queue, String body, Traceparent traceparent) throws JMSException {
        try (PaymentProducer producer = new PaymentProducer(consumer.settings(), queue)) {
            TextMessage message = producer.session().createTextMessage(body);
            if (traceparent != null) {
                message.setStringProperty("traceparent", traceparent.toString());
            }
            producer.send(message);
        }
    }

    private static String queue() {
        return consumer.settings().get("PAYMENTS_QUEUE");
    }

    private static String account() {
        return "trace-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static OtlpReceiver receiver() {
        try {
            return OtlpReceiver.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A W3C traceparent of a sampled span: version 00, trace ID, span ID, flags 01. */
    record Traceparent(String traceId, String spanId) {

        static Traceparent random() {
            return new Traceparent(hex(16), hex(8));
        }

        static Traceparent parse(String header) {
            assertThat(header).as("a traceparent").matches("00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]");
            String[] parts = header.split("-");
            return new Traceparent(parts[1], parts[2]);
        }

        /** The same trace, sent again by the producer: a span of its own. */
        Traceparent resent() {
            return new Traceparent(traceId, hex(8));
        }

        @Override
        public String toString() {
            return "00-" + traceId + "-" + spanId + "-01";
        }

        private static String hex(int bytes) {
            byte[] random = new byte[bytes];
            ThreadLocalRandom.current().nextBytes(random);
            random[0] |= 1; // never all zeros, which W3C calls invalid
            return HexFormat.of().formatHex(random);
        }
    }

    /** A downstream service's receipt of one event's announcement. */
    private static final class Subscriber implements AutoCloseable {

        private final Connection connection;
        private final MessageConsumer consumer;

        Subscriber(UUID eventId) throws JMSException {
            connection = new ActiveMQConnectionFactory(
                            TracingIT.consumer.settings().brokerHaUrl(),
                            TracingIT.consumer.settings().get("BROKER_OPERATOR_USER"),
                            TracingIT.consumer.settings().get("BROKER_OPERATOR_PASSWORD"))
                    .createConnection();
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            // The durable queue of a downstream service: its receipt of this event's announcement alone.
            consumer = session.createConsumer(
                    session.createQueue(AnnouncementSubscriber.QUEUE), "eventId = '" + eventId + "'");
            connection.start();
        }

        Message announcement() throws JMSException {
            Message message = consumer.receive(PATIENCE.toMillis());
            assertThat(message).as("the announcement").isNotNull();
            return message;
        }

        @Override
        public void close() throws JMSException {
            connection.close();
        }
    }
}
