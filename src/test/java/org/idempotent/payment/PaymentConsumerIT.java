package org.idempotent.payment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import jakarta.jms.BytesMessage;
import jakarta.jms.JMSException;
import jakarta.jms.MapMessage;
import jakarta.jms.Message;
import jakarta.jms.StreamMessage;
import jakarta.jms.TextMessage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.idempotent.delivery.control.MessageProperties;
import org.idempotent.fixtures.RunningConsumer;
import org.idempotent.loadgen.PaymentProducer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The consumer as deployed: messages go through the real broker, the Artemis RAR and the MDB of the product WAR on
 * Payara Micro, into PostgreSQL.
 */
class PaymentConsumerIT {

    private static final Duration PATIENCE = Duration.ofSeconds(60);

    @RegisterExtension
    static final RunningConsumer consumer = RunningConsumer.shared();

    private static DeadLetterReader deadLetters;
    private static DeadLetterReader conflicts;

    @BeforeAll
    static void startConsumer() throws JMSException {
        deadLetters = new DeadLetterReader(consumer.settings());
        conflicts =
                new DeadLetterReader(consumer.settings(), consumer.settings().get("CONFLICTS_QUEUE"));
    }

    @AfterAll
    static void stopConsumer() throws JMSException {
        if (deadLetters != null) {
            deadLetters.close();
        }
        if (conflicts != null) {
            conflicts.close();
        }
    }

    @Test
    void firstPaymentCreatesTheAccount() throws JMSException {
        String account = account();
        UUID eventId = UUID.randomUUID();
        assertThat(consumer.ledger().balance(account)).isNull();

        send(PaymentProducer.json(eventId, account, 1234));

        await().atMost(PATIENCE)
                .untilAsserted(
                        () -> assertThat(consumer.ledger().balance(account)).isEqualTo(1234));
        assertThat(consumer.ledger().isProcessed(eventId)).isTrue();
    }

    @Test
    void bytesMessageWithUtf8JsonIsApplied() throws JMSException {
        String account = account();
        try (PaymentProducer producer = new PaymentProducer(consumer.settings())) {
            producer.sendBytes(PaymentProducer.json(UUID.randomUUID(), account, 77));
        }

        await().atMost(PATIENCE)
                .untilAsserted(
                        () -> assertThat(consumer.ledger().balance(account)).isEqualTo(77));
    }

    @Test
    void sequentialDuplicateIsAcknowledgedWithoutEffect() throws JMSException {
        String account = account();
        UUID eventId = UUID.randomUUID();
        send(PaymentProducer.json(eventId, account, 500));
        await().atMost(PATIENCE)
                .untilAsserted(
                        () -> assertThat(consumer.ledger().balance(account)).isEqualTo(500));
        long duplicates = consumer.metrics().outcome("duplicate");
        long failed = consumer.metrics().outcome("failed");

        send(PaymentProducer.json(eventId, account, 500));

        await().atMost(PATIENCE)
                .untilAsserted(() ->
                        assertThat(consumer.metrics().outcome("duplicate")).isEqualTo(duplicates + 1));
        assertThat(consumer.ledger().balance(account)).isEqualTo(500);
        assertThat(consumer.metrics().outcome("failed"))
                .as("a duplicate is not a failure: no rollback, no redelivery")
                .isEqualTo(failed);
    }

    @Test
    void duplicateLongAfterTheFirstCommitIsStillCaught() throws JMSException {
        String account = account();
        UUID eventId = UUID.randomUUID();
        send(PaymentProducer.json(eventId, account, 900));
        await().atMost(PATIENCE)
                .untilAsserted(
                        () -> assertThat(consumer.ledger().balance(account)).isEqualTo(900));
        consumer.ledger().age(eventId, Duration.ofDays(6));
        long duplicates = consumer.metrics().outcome("duplicate");
        double ages = consumer.metrics().gauge("payments_duplicate_age_seconds_count");
        double sum = consumer.metrics().gauge("payments_duplicate_age_seconds_sum");

        send(PaymentProducer.json(eventId, account, 900));

        await().atMost(PATIENCE)
                .untilAsserted(() ->
                        assertThat(consumer.metrics().outcome("duplicate")).isEqualTo(duplicates + 1));
        assertThat(consumer.ledger().balance(account)).isEqualTo(900);
        assertThat(consumer.metrics().gauge("payments_duplicate_age_seconds_count"))
                .as("its age is recorded")
                .isEqualTo(ages + 1);
        // The sum is exact; max and quantiles come from a sampling reservoir that may skip one value among many.
        assertThat(consumer.metrics().gauge("payments_duplicate_age_seconds_sum") - sum)
                .isBetween(6 * 86_400.0, 6 * 86_400.0 + 120);
    }

    /**
     * The seed's race, through the broker: every event is sent 8 times back to back, so that the consumer's 4+
     * sessions receive copies of the same event at the same time. Few accounts, so that the guard on the account row
     * alone could not hide a double application: only the dedup insert can. That the copies really are in flight
     * together is shown first: with the first account's row locked by the test, the delivery that inserted the dedup
     * row waits on the account, and its copies wait on that uncommitted dedup row, several sessions at once.
     */
    @Test
    void duplicateDeliveredConcurrentlyIsAppliedOnce() throws Exception {
        int events = 200;
        int copies = 8;
        String prefix = account();
        long applied = consumer.metrics().outcome("applied");
        long duplicates = consumer.metrics().outcome("duplicate");
        Map<String, Long> expected = new HashMap<>();
        List<UUID> ids = new ArrayList<>();
        String held = prefix + "-0";
        consumer.ledger().setBalance(held, 0);
        expected.put(held, 0L);
        try (PaymentProducer producer = new PaymentProducer(consumer.settings())) {
            try (AutoCloseable lock = consumer.ledger().lockAccount(held)) {
                UUID eventId = UUID.randomUUID();
                ids.add(eventId);
                expected.merge(held, 50L, Long::sum);
                for (int c = 0; c < copies; c++) {
                    producer.sendText(PaymentProducer.json(eventId, held, 50));
                }
                await().atMost(PATIENCE)
                        .untilAsserted(() -> assertThat(consumer.ledger().sessionsWaitingForALock())
                                .as("the winner on the account row, its copies on the winner's dedup row")
                                .isGreaterThanOrEqualTo(3));
            }
            for (int i = 0; i < events - 1; i++) {
                UUID eventId = UUID.randomUUID();
                String account = prefix + "-" + (i % 10);
                long amount = 100 + i;
                ids.add(eventId);
                expected.merge(account, amount, Long::sum);
                for (int c = 0; c < copies; c++) {
                    producer.sendText(PaymentProducer.json(eventId, account, amount));
                }
            }
        }

        await().atMost(Duration.ofMinutes(3))
                .untilAsserted(() -> assertThat(consumer.metrics().outcome("applied")
                                - applied
                                + consumer.metrics().outcome("duplicate")
                                - duplicates)
                        .isEqualTo((long) events * copies));
        assertThat(consumer.metrics().outcome("applied") - applied).isEqualTo(events);
        assertThat(consumer.metrics().outcome("duplicate") - duplicates).isEqualTo((long) events * (copies - 1));
        assertThat(consumer.ledger().processedCount(ids)).isEqualTo(events);
        expected.forEach((account, balance) ->
                assertThat(consumer.ledger().balance(account)).as(account).isEqualTo(balance));
    }

    @Test
    void sameIdReusedForADifferentPaymentIsAConflictMovedAsideWithBothFingerprints() throws JMSException {
        String account = account();
        UUID eventId = UUID.randomUUID();
        send(PaymentProducer.json(eventId, account, 500));
        await().atMost(PATIENCE)
                .untilAsserted(
                        () -> assertThat(consumer.ledger().balance(account)).isEqualTo(500));
        long conflictCount = consumer.metrics().outcome("conflict");
        String probe = UUID.randomUUID().toString();
        String otherAccount = account();

        try (PaymentProducer producer = new PaymentProducer(consumer.settings())) {
            for (String reuse : List.of(
                    PaymentProducer.json(eventId, account, 900), PaymentProducer.json(eventId, otherAccount, 500))) {
                TextMessage message = producer.session().createTextMessage(reuse);
                message.setStringProperty("probe", probe);
                producer.send(message);
            }
        }

        List<Message> moved = conflicts.receive("probe = '" + probe + "'", 2, PATIENCE);
        for (Message message : moved) {
            assertThat(message.getStringProperty(MessageProperties.REASON)).isEqualTo("PAYLOAD_MISMATCH");
            assertThat(message.getStringProperty(MessageProperties.ORIGINAL_FINGERPRINT))
                    .hasSize(64)
                    .isNotEqualTo(message.getStringProperty(MessageProperties.FINGERPRINT));
            assertThat(message.getStringProperty(MessageProperties.DETAIL)).contains(eventId.toString());
        }
        assertThat(consumer.metrics().outcome("conflict") - conflictCount).isEqualTo(2);
        assertThat(consumer.ledger().balance(account)).isEqualTo(500);
        assertThat(consumer.ledger().balance(otherAccount))
                .as("the reuse on another account credited nothing: no account row at all")
                .isNull();
        assertThat(deadLetters.receive("probe = '" + probe + "'", 0, Duration.ofSeconds(1)))
                .as("a conflict is not a malformed message")
                .isEmpty();
    }

    /**
     * True duplicates and conflicting reuses of the same IDs, delivered together: whichever payload wins the insert is
     * applied, its copies are duplicates, every other payload is a conflict.
     */
    @Test
    void duplicatesAndConflictingReusesDeliveredTogetherAreEachClassified() throws JMSException {
        int events = 50;
        long applied = consumer.metrics().outcome("applied");
        long duplicates = consumer.metrics().outcome("duplicate");
        long conflictCount = consumer.metrics().outcome("conflict");
        String probe = UUID.randomUUID().toString();
        Map<String, UUID> accounts = new LinkedHashMap<>();
        try (PaymentProducer producer = new PaymentProducer(consumer.settings())) {
            for (int i = 0; i < events; i++) {
                UUID eventId = UUID.randomUUID();
                String account = account();
                accounts.put(account, eventId);
                // 4 copies of amount 100 and 2 of amount 200 under one ID, interleaved.
                for (long amount : new long[] {100, 200, 100, 100, 200, 100}) {
                    TextMessage message =
                            producer.session().createTextMessage(PaymentProducer.json(eventId, account, amount));
                    message.setStringProperty("probe", probe);
                    producer.send(message);
                }
            }
        }

        await().atMost(Duration.ofMinutes(2))
                .untilAsserted(() -> assertThat(consumer.metrics().outcome("applied")
                                - applied
                                + consumer.metrics().outcome("duplicate")
                                - duplicates
                                + consumer.metrics().outcome("conflict")
                                - conflictCount)
                        .isEqualTo(events * 6L));
        long expectedDuplicates = 0;
        long expectedConflicts = 0;
        for (String account : accounts.keySet()) {
            long balance = consumer.ledger().balance(account);
            assertThat(balance).as(account).isIn(100L, 200L);
            expectedDuplicates += balance == 100 ? 3 : 1;
            expectedConflicts += balance == 100 ? 2 : 4;
        }
        assertThat(consumer.metrics().outcome("applied") - applied).isEqualTo(events);
        assertThat(consumer.metrics().outcome("duplicate") - duplicates).isEqualTo(expectedDuplicates);
        assertThat(consumer.metrics().outcome("conflict") - conflictCount).isEqualTo(expectedConflicts);
        assertThat(conflicts.receive("probe = '" + probe + "'", (int) expectedConflicts, PATIENCE))
                .allSatisfy(message -> assertThat(message.getStringProperty(MessageProperties.REASON))
                        .isEqualTo("PAYLOAD_MISMATCH"));
    }

    @Test
    void transientFailureRollsBackPaymentAndDedupRecordTogetherAndIsRedelivered() throws JMSException {
        String account = account();
        UUID eventId = UUID.randomUUID();
        long failed = consumer.metrics().outcome("failed");
        consumer.ledger().breakAccountsTable();
        try {
            send(PaymentProducer.json(eventId, account, 321));

            await().atMost(PATIENCE)
                    .untilAsserted(() ->
                            assertThat(consumer.metrics().outcome("failed")).isGreaterThan(failed));
            assertThat(consumer.ledger().isProcessed(eventId))
                    .as("the dedup insert rolled back with the payment")
                    .isFalse();
        } finally {
            consumer.ledger().repair();
        }

        await().atMost(PATIENCE)
                .untilAsserted(
                        () -> assertThat(consumer.ledger().balance(account)).isEqualTo(321));
        assertThat(consumer.ledger().isProcessed(eventId)).isTrue();
    }

    /**
     * A payment that would take the balance past bigint fails the same way on every attempt (SQLState 22003): it is
     * dead-lettered at once with its reason, and the account is not blocked for the next payment.
     */
    @Test
    void aBalanceThatWouldOverflowIsDeadLetteredAtOnceAndTheNextPaymentStillApplies() throws JMSException {
        String account = account();
        long nearMax = Long.MAX_VALUE - 10;
        consumer.ledger().setBalance(account, nearMax);
        String probe = UUID.randomUUID().toString();
        UUID overflowing = UUID.randomUUID();
        long failed = consumer.metrics().outcome("failed");
        long rejected = consumer.metrics().outcome("rejected");

        try (PaymentProducer producer = new PaymentProducer(consumer.settings())) {
            TextMessage message = producer.session().createTextMessage(PaymentProducer.json(overflowing, account, 100));
            message.setStringProperty("probe", probe);
            producer.send(message);
        }

        Message dead =
                deadLetters.receive("probe = '" + probe + "'", 1, PATIENCE).get(0);
        assertThat(dead.getStringProperty(MessageProperties.REASON)).isEqualTo("AMOUNT_OUT_OF_RANGE");
        assertThat(dead.getStringProperty(MessageProperties.DETAIL)).contains("22003");
        assertThat(consumer.metrics().outcome("rejected") - rejected).isEqualTo(1);
        assertThat(consumer.metrics().outcome("failed")).as("not retried").isEqualTo(failed);
        assertThat(consumer.ledger().isProcessed(overflowing)).isFalse();
        assertThat(consumer.ledger().balance(account)).isEqualTo(nearMax);

        send(PaymentProducer.json(UUID.randomUUID(), account, 5));
        await().atMost(PATIENCE)
                .untilAsserted(
                        () -> assertThat(consumer.ledger().balance(account)).isEqualTo(nearMax + 5));
    }

    /**
     * Only the dedup key is a duplicate. A unique violation on another key (as a later migration might add) counted
     * as a duplicate would be rolled back and acknowledged: a payment lost. It is a refused payment, dead-lettered.
     */
    @Test
    void aUniqueViolationOnAnotherKeyIsNotADuplicate() throws JMSException {
        String prefix = "uq-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        String index = "it_unique_balance_" + prefix.substring(3, 11);
        consumer.ledger().setBalance(prefix + "a", 700);
        consumer.ledger().addUniqueBalanceKey(index, prefix);
        String probe = UUID.randomUUID().toString();
        UUID eventId = UUID.randomUUID();
        long duplicates = consumer.metrics().outcome("duplicate");
        try {
            try (PaymentProducer producer = new PaymentProducer(consumer.settings())) {
                TextMessage message =
                        producer.session().createTextMessage(PaymentProducer.json(eventId, prefix + "b", 700));
                message.setStringProperty("probe", probe);
                producer.send(message);
            }

            Message dead =
                    deadLetters.receive("probe = '" + probe + "'", 1, PATIENCE).get(0);
            assertThat(dead.getStringProperty(MessageProperties.REASON)).isEqualTo("REFUSED_BY_DATABASE");
            assertThat(dead.getStringProperty(MessageProperties.DETAIL))
                    .contains("23505")
                    .contains(index);
        } finally {
            consumer.ledger().dropIndex(index);
        }
        assertThat(consumer.metrics().outcome("duplicate"))
                .as("not taken for a duplicate")
                .isEqualTo(duplicates);
        assertThat(consumer.ledger().isProcessed(eventId)).isFalse();
        assertThat(consumer.ledger().balance(prefix + "b")).isNull();
    }

    @Test
    void invalidMessagesAreDeadLetteredAtOnceWithTheirReasonAndNoEffect() throws JMSException {
        String probe = UUID.randomUUID().toString();
        String account = account();
        UUID validId = UUID.randomUUID();
        String notJson = "this is not json";
        Map<String, String> expectedReasons = new LinkedHashMap<>();
        long rejected = consumer.metrics().outcome("rejected");
        long failed = consumer.metrics().outcome("failed");
        try (PaymentProducer producer = new PaymentProducer(consumer.settings())) {
            var session = producer.session();
            sendProbe(
                    producer, session.createTextMessage(notJson), probe, "not-json", expectedReasons, "MALFORMED_JSON");
            sendProbe(
                    producer, session.createTextMessage("[1,2]"), probe, "array", expectedReasons, "NOT_A_JSON_OBJECT");
            sendProbe(
                    producer,
                    session.createTextMessage("{\"eventId\":\"" + validId + "\",\"accountId\":\"" + account + "\"}"),
                    probe,
                    "missing-amount",
                    expectedReasons,
                    "MISSING_FIELD");
            sendProbe(
                    producer,
                    session.createTextMessage(PaymentProducer.json(validId, account, 0)),
                    probe,
                    "zero-amount",
                    expectedReasons,
                    "INVALID_AMOUNT");
            sendProbe(
                    producer,
                    session.createTextMessage(PaymentProducer.json(validId, account, 1_000_000_000_001L)),
                    probe,
                    "huge-amount",
                    expectedReasons,
                    "INVALID_AMOUNT");
            sendProbe(
                    producer,
                    session.createTextMessage(
                            "{\"eventId\":\"" + validId + "\",\"accountId\":\"" + account + "\",\"amountCents\":12.5}"),
                    probe,
                    "fraction",
                    expectedReasons,
                    "INVALID_AMOUNT");
            sendProbe(
                    producer,
                    session.createTextMessage(
                            "{\"eventId\":\"nope\",\"accountId\":\"" + account + "\",\"amountCents\":5}"),
                    probe,
                    "bad-uuid",
                    expectedReasons,
                    "INVALID_EVENT_ID");
            sendProbe(
                    producer,
                    session.createTextMessage(
                            "{\"eventId\":\"" + validId + "\",\"accountId\":\"bad account\"" + ",\"amountCents\":5}"),
                    probe,
                    "bad-account",
                    expectedReasons,
                    "INVALID_ACCOUNT_ID");
            sendProbe(producer, session.createTextMessage(""), probe, "empty", expectedReasons, "EMPTY_BODY");
            sendProbe(
                    producer,
                    session.createTextMessage("x".repeat(70_000)),
                    probe,
                    "huge-text",
                    expectedReasons,
                    "BODY_TOO_LARGE");
            String valid = "\"eventId\":\"" + validId + "\",\"accountId\":\"" + account + "\",\"amountCents\":5";
            sendProbe(
                    producer,
                    session.createTextMessage("{" + valid + ",\"x\":" + "[".repeat(5000) + "]".repeat(5000) + "}"),
                    probe,
                    "nested-5000",
                    expectedReasons,
                    "MALFORMED_JSON");
            sendProbe(
                    producer,
                    session.createTextMessage("{" + valid + ",\"x\":" + "9".repeat(5000) + "}"),
                    probe,
                    "number-5000-digits",
                    expectedReasons,
                    "MALFORMED_JSON");
            sendProbe(
                    producer,
                    session.createTextMessage("{\"eventId\":\"" + validId + "\",\"accountId\":\"" + account
                            + "\",\"amountCents\":1e99999999999}"),
                    probe,
                    "huge-exponent",
                    expectedReasons,
                    "MALFORMED_JSON");
            sendProbe(
                    producer,
                    session.createTextMessage("{" + valid + ",\"amountCents\":500}"),
                    probe,
                    "duplicate-key",
                    expectedReasons,
                    "MALFORMED_JSON");
            sendProbe(
                    producer,
                    session.createTextMessage(
                            "{\"eventId\":\"" + validId + "\",\"accountId\":\"" + account + "\",\"amountCents\":null}"),
                    probe,
                    "null-amount",
                    expectedReasons,
                    "MISSING_FIELD");
            sendProbe(
                    producer,
                    session.createTextMessage(
                            "{\"eventId\":\"" + validId + "\",\"accountId\":[\"" + account + "\"],\"amountCents\":5}"),
                    probe,
                    "array-account",
                    expectedReasons,
                    "INVALID_ACCOUNT_ID");
            sendProbe(
                    producer,
                    session.createTextMessage(
                            "{\"eventId\":\"" + validId + "\",\"accountId\":\"" + account + "\",\"amountCents\":true}"),
                    probe,
                    "boolean-amount",
                    expectedReasons,
                    "INVALID_AMOUNT");
            sendProbe(
                    producer,
                    session.createTextMessage("{" + valid + ",\"occurredAt\":\"last tuesday\"}"),
                    probe,
                    "bad-occurred-at",
                    expectedReasons,
                    "INVALID_OCCURRED_AT");
            BytesMessage latin1 = session.createBytesMessage();
            latin1.writeBytes(PaymentProducer.json(validId, "caf\u00e9", 5).getBytes(StandardCharsets.ISO_8859_1));
            sendProbe(producer, latin1, probe, "latin1", expectedReasons, "INVALID_ENCODING");
            MapMessage map = session.createMapMessage();
            map.setString("eventId", validId.toString());
            sendProbe(producer, map, probe, "map", expectedReasons, "UNSUPPORTED_MESSAGE_TYPE");
            StreamMessage stream = session.createStreamMessage();
            stream.writeString("{}");
            sendProbe(producer, stream, probe, "stream", expectedReasons, "UNSUPPORTED_MESSAGE_TYPE");
            sendProbe(producer, session.createMessage(), probe, "no-body", expectedReasons, "UNSUPPORTED_MESSAGE_TYPE");
        }

        List<Message> dead = deadLetters.receive("probe = '" + probe + "'", expectedReasons.size(), PATIENCE);

        Map<String, String> reasons = new LinkedHashMap<>();
        for (Message message : dead) {
            reasons.put(message.getStringProperty("kind"), message.getStringProperty(MessageProperties.REASON));
            assertThat(message.getStringProperty(MessageProperties.DETAIL)).isNotBlank();
            assertThat(message.getStringProperty(MessageProperties.ORIGINAL_DESTINATION))
                    .contains(consumer.settings().get("PAYMENTS_QUEUE"));
            if ("not-json".equals(message.getStringProperty("kind"))) {
                assertThat(((TextMessage) message).getText())
                        .as("the body travels unchanged")
                        .isEqualTo(notJson);
            }
        }
        assertThat(reasons).isEqualTo(expectedReasons);
        assertThat(consumer.metrics().outcome("rejected") - rejected).isEqualTo(expectedReasons.size());
        assertThat(consumer.metrics().outcome("failed"))
                .as("dead-lettered at once, no redelivery attempts burnt")
                .isEqualTo(failed);
        assertThat(consumer.ledger().isProcessed(validId)).isFalse();
        assertThat(consumer.ledger().balance(account)).isNull();

        // ...and the consumer goes on with the next message.
        UUID next = UUID.randomUUID();
        send(PaymentProducer.json(next, account, 42));
        await().atMost(PATIENCE)
                .untilAsserted(
                        () -> assertThat(consumer.ledger().balance(account)).isEqualTo(42));
    }

    private static void sendProbe(
            PaymentProducer producer,
            Message message,
            String probe,
            String kind,
            Map<String, String> expectedReasons,
            String reason)
            throws JMSException {
        message.setStringProperty("probe", probe);
        message.setStringProperty("kind", kind);
        producer.send(message);
        expectedReasons.put(kind, reason);
    }

    private static void send(String json) throws JMSException {
        try (PaymentProducer producer = new PaymentProducer(consumer.settings())) {
            producer.sendText(json);
        }
    }

    private static String account() {
        return "it-" + UUID.randomUUID().toString().substring(0, 8);
    }
}
