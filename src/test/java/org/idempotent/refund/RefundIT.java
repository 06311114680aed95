package org.idempotent.refund;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.TextMessage;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.idempotent.delivery.control.MessageProperties;
import org.idempotent.fixtures.Jdbc;
import org.idempotent.fixtures.RunningConsumer;
import org.idempotent.loadgen.PaymentProducer;
import org.idempotent.payment.DeadLetterReader;
import org.idempotent.stack.Database;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Refunds through the delivery machinery: applied once per refund event ID however often and however concurrently
 * delivered, never past their payment, waiting for a payment that comes after them, dead-lettered with the reason for
 * one that never comes; announced in the account's sequence.
 */
class RefundIT {

    private static final Duration PATIENCE = Duration.ofSeconds(60);
    /**
     * Deliveries at about 0, 1, 3 and 7 s with the back-off: a refund waits 7 s for its payment (with 5, the suite's
     * longest test waited 15 s for the same give-up).
     */
    private static final int DEFERRED_DELIVERIES = 4;

    /** Refunds of one payment reach this many sessions at once. */
    private static final int SESSIONS = 8;

    @RegisterExtension
    static final RunningConsumer consumer = RunningConsumer.on("refund-it", "it.refund")
            .with("DEFERRED_DELIVERIES_MAX", String.valueOf(DEFERRED_DELIVERIES))
            .with("REFUNDS_MAX_SESSIONS", String.valueOf(SESSIONS));

    @Test
    void aRefundDeliveredManyTimesAtOnceIsAppliedOnce() throws Exception {
        String account = account();
        UUID payment = pay(account, 1_000);
        UUID refund = UUID.randomUUID();
        long duplicates = consumer.metrics().outcome("duplicate");

        int copies = 6;
        CyclicBarrier together = new CyclicBarrier(copies);
        // A thread for every party of the barrier: the common pool has one worker fewer than the cores, so on 3 to 6
        // cores the copies started first would hold every worker at the barrier while the rest never start.
        ExecutorService senders = Executors.newFixedThreadPool(copies);
        try {
            List<CompletableFuture<Void>> sends = new ArrayList<>();
            for (int c = 0; c < copies; c++) {
                sends.add(CompletableFuture.runAsync(
                        () -> {
                            try {
                                together.await(10, TimeUnit.SECONDS);
                                refund(refund, payment, 300);
                            } catch (Exception e) {
                                throw new IllegalStateException(e);
                            }
                        },
                        senders));
            }
            CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
        } finally {
            senders.shutdownNow();
        }

        await().atMost(PATIENCE)
                .untilAsserted(() ->
                        assertThat(consumer.metrics().outcome("duplicate")).isEqualTo(duplicates + copies - 1));
        assertThat(consumer.ledger().balance(account)).isEqualTo(700);
        assertThat(refunded(payment)).isEqualTo(300);
        assertThat(kindOf(refund)).isEqualTo("refund");
    }

    /**
     * Eight refunds of 300 of one payment of 1,000, taken by eight sessions at once and held together behind a lock on
     * the payment's ledger row, then let go: three applied, five refused for the reason, each checked against the
     * refunds committed before it.
     */
    @Test
    void refundsOfOnePaymentAtOnceNeverExceedIt() throws Exception {
        String account = account();
        UUID payment = pay(account, 1_000);
        List<String> probes = new ArrayList<>();
        try (Connection hold = Database.connect(consumer.settings())) {
            hold.setAutoCommit(false);
            Jdbc.prepare(hold, "SELECT 1 FROM payments WHERE event_id = ? FOR UPDATE", payment)
                    .executeQuery()
                    .close();
            sendTogether(payment, probes);
            // Four at once already ask for 1,200 of the 1,000; a session handed two refunds takes its second later.
            await().atMost(PATIENCE)
                    .during(Duration.ofSeconds(1))
                    .until(() -> consumer.ledger().sessionsWaitingForALock() >= 4);
            hold.rollback();
        }

        try (DeadLetterReader deadLetters = new DeadLetterReader(consumer.settings())) {
            List<Message> refused = deadLetters.receive(anyOf(probes), SESSIONS - 3, PATIENCE);
            for (Message message : refused) {
                assertThat(message.getStringProperty(MessageProperties.REASON))
                        .as("every refusal for its reason: %s", message.getStringProperty(MessageProperties.DETAIL))
                        .isEqualTo("REFUND_EXCEEDS_PAYMENT");
            }
        }
        awaitBalance(account, 100);
        assertThat(refunded(payment)).isEqualTo(900);
    }

    /** {@code SESSIONS} refunds of 300 of {@code payment} in one transaction, their probes added to {@code probes}. */
    private static void sendTogether(UUID payment, List<String> probes) throws JMSException {
        try (PaymentProducer producer =
                new PaymentProducer(consumer.settings(), consumer.settings().get("REFUNDS_QUEUE"), true)) {
            for (int r = 0; r < SESSIONS; r++) {
                String probe = UUID.randomUUID().toString();
                TextMessage message = producer.session()
                        .createTextMessage(PaymentProducer.refundJson(UUID.randomUUID(), payment, 300));
                message.setStringProperty("probe", probe);
                producer.send(message);
                probes.add(probe);
            }
            producer.commit();
        }
    }

    @Test
    void anOverRefundAndARefundOfAFullyRefundedPaymentAreDeadLetteredWithTheirReason() throws Exception {
        String account = account();
        UUID payment = pay(account, 500);
        try (DeadLetterReader deadLetters = new DeadLetterReader(consumer.settings())) {
            String tooMuch = refund(UUID.randomUUID(), payment, 501);
            Message over = deadLetters.receive(probe(tooMuch), 1, PATIENCE).get(0);
            assertThat(over.getStringProperty(MessageProperties.REASON)).isEqualTo("REFUND_EXCEEDS_PAYMENT");
            assertThat(over.getStringProperty(MessageProperties.DETAIL)).contains("501 cents", "500 cents paid");
            assertThat(consumer.ledger().balance(account)).isEqualTo(500);

            refund(UUID.randomUUID(), payment, 500);
            awaitBalance(account, 0);

            String oneMore = refund(UUID.randomUUID(), payment, 1);
            Message full = deadLetters.receive(probe(oneMore), 1, PATIENCE).get(0);
            assertThat(full.getStringProperty(MessageProperties.REASON)).isEqualTo("REFUND_EXCEEDS_PAYMENT");
            assertThat(full.getStringProperty(MessageProperties.DETAIL)).contains("500 refunded already");
        }
        assertThat(consumer.ledger().balance(account)).isZero();
    }

    /** One event ID, one event, whatever its kind: a refund under a payment's ID is another event under that ID. */
    @Test
    void aRefundReusingAPaymentsEventIdIsAConflictAndNotApplied() throws Exception {
        String account = account();
        UUID first = pay(account, 500);
        UUID second = UUID.randomUUID();
        send(consumer.settings().get("PAYMENTS_QUEUE"), PaymentProducer.json(second, account, 300));
        awaitBalance(account, 800);

        try (DeadLetterReader conflicts =
                new DeadLetterReader(consumer.settings(), consumer.settings().get("CONFLICTS_QUEUE"))) {
            String probe = refund(first, second, 100);

            Message moved = conflicts.receive(probe(probe), 1, PATIENCE).get(0);

            assertThat(moved.getStringProperty(MessageProperties.REASON)).isEqualTo("PAYLOAD_MISMATCH");
            assertThat(moved.getStringProperty(MessageProperties.EVENT_ID)).isEqualTo(first.toString());
        }
        assertThat(consumer.ledger().balance(account)).isEqualTo(800);
        assertThat(refunded(second)).isZero();
        assertThat(kindOf(first)).isEqualTo("payment");
    }

    @Test
    void aRefundThatArrivesBeforeItsPaymentWaitsForItAndIsAppliedAfterIt() throws Exception {
        String account = account();
        UUID payment = UUID.randomUUID();
        UUID refund = UUID.randomUUID();
        long deferred = consumer.metrics().outcome("deferred");

        refund(refund, payment, 200);
        await().atMost(PATIENCE)
                .untilAsserted(
                        () -> assertThat(consumer.metrics().outcome("deferred")).isGreaterThan(deferred));
        assertThat(consumer.ledger().isProcessed(refund))
                .as("no record of a refund not applied")
                .isFalse();
        send(consumer.settings().get("PAYMENTS_QUEUE"), PaymentProducer.json(payment, account, 500));

        awaitBalance(account, 300);
        assertThat(refunded(payment)).isEqualTo(200);
        assertThat(announced(account))
                .as("payment then refund, in the account's sequence")
                .containsExactly("1 payment 500 500", "2 refund -200 300");
    }

    @Test
    void aRefundOfAPaymentThatNeverComesIsDeadLetteredWithItsReasonAfterItsBudget() throws Exception {
        UUID refund = UUID.randomUUID();
        try (DeadLetterReader deadLetters = new DeadLetterReader(consumer.settings())) {
            String probe = refund(refund, UUID.randomUUID(), 100);

            Message givenUp = deadLetters.receive(probe(probe), 1, PATIENCE).get(0);

            assertThat(givenUp.getStringProperty(MessageProperties.REASON)).isEqualTo("UNKNOWN_PAYMENT");
            assertThat(givenUp.getStringProperty(MessageProperties.DELIVERIES))
                    .isEqualTo(String.valueOf(DEFERRED_DELIVERIES));
        }
        assertThat(consumer.ledger().isProcessed(refund)).isFalse();
    }

    private static UUID pay(String account, long cents) throws JMSException {
        UUID payment = UUID.randomUUID();
        send(consumer.settings().get("PAYMENTS_QUEUE"), PaymentProducer.json(payment, account, cents));
        awaitBalance(account, cents);
        return payment;
    }

    private static String refund(UUID refund, UUID payment, long cents) throws JMSException {
        return send(consumer.settings().get("REFUNDS_QUEUE"), PaymentProducer.refundJson(refund, payment, cents));
    }

    /** Sends {@code json} with a probe property, by which its dead letter is found; returns the probe. */
    private static String send(String queue, String json) throws JMSException {
        String probe = UUID.randomUUID().toString();
        try (PaymentProducer producer = new PaymentProducer(consumer.settings(), queue)) {
            TextMessage message = producer.session().createTextMessage(json);
            message.setStringProperty("probe", probe);
            producer.send(message);
        }
        return probe;
    }

    private static String probe(String probe) {
        return "probe = '" + probe + "'";
    }

    private static String anyOf(List<String> probes) {
        return "probe IN ('" + String.join("', '", probes) + "')";
    }

    private static void awaitBalance(String account, long cents) {
        await().atMost(PATIENCE)
                .untilAsserted(
                        () -> assertThat(consumer.ledger().balance(account)).isEqualTo(cents));
    }

    private static long refunded(UUID payment) throws SQLException {
        return Long.parseLong(one("SELECT refunded_cents FROM payments WHERE event_id = ?", payment)
                .get(0));
    }

    private static String kindOf(UUID eventId) throws SQLException {
        return one("SELECT kind FROM processed_events WHERE event_id = ?", eventId)
                .get(0);
    }

    /** The account's outbox rows in sequence: "sequence kind amount balance". */
    private static List<String> announced(String account) throws SQLException {
        return one(
                "SELECT account_sequence || ' ' || kind || ' ' || amount_cents || ' ' || balance_cents"
                        + " FROM payment_announcements WHERE account_id = ? ORDER BY account_sequence",
                account);
    }

    private static List<String> one(String sql, Object parameter) throws SQLException {
        List<String> rows = new ArrayList<>();
        try (Connection db = Database.connectAsApplication(consumer.settings());
                PreparedStatement query = Jdbc.prepare(db, sql, parameter);
                ResultSet row = query.executeQuery()) {
            while (row.next()) {
                rows.add(row.getString(1));
            }
        }
        return rows;
    }

    private static String account() {
        return "refund-" + UUID.randomUUID().toString().substring(0, 8);
    }
}
