package org.idempotent.announcement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import jakarta.jms.JMSException;
import jakarta.json.JsonObject;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.idempotent.fixtures.AnnouncementSubscriber;
import org.idempotent.fixtures.AnnouncementSubscriber.Received;
import org.idempotent.fixtures.OutboxRows;
import org.idempotent.fixtures.RunningConsumer;
import org.idempotent.loadgen.PaymentProducer;
import org.idempotent.stack.AdminClient;
import org.idempotent.stack.Database;
import org.idempotent.stack.InstanceMetrics;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The outbox as a downstream service meets it: a subscriber on the announcement address's durable queue, compared
 * with the ledger. Announcements of other tests on the shared broker are told apart by account.
 */
class AnnouncementIT {

    private static final Duration PATIENCE = Duration.ofSeconds(60);
    /**
     * Delivery time, not a guess at how late a copy may come: the relay publishes every copy of a row before it marks
     * the row sent, and {@link #receiveFor} waits for the marks before its last look.
     */
    private static final Duration QUIET = Duration.ofMillis(500);
    /**
     * The README's bound on an announcement's delay, from its payment's commit to a subscriber, at 99 % under a light
     * load: a relay that waited for its 5 s timer instead of being woken by the commit misses it by far.
     */
    static final Duration DELAY_P99 = Duration.ofSeconds(1);
    /** The light load: payments a second, and for how long. */
    private static final int LIGHT_RATE = 20;

    private static final int LIGHT_PAYMENTS = 100;

    @RegisterExtension
    static final RunningConsumer consumer = RunningConsumer.shared();

    private static AnnouncementSubscriber subscriber;

    @BeforeAll
    static void startConsumer() throws JMSException {
        subscriber = new AnnouncementSubscriber(consumer.settings());
    }

    @AfterAll
    static void stop() throws JMSException {
        if (subscriber != null) {
            subscriber.close();
        }
    }

    @Test
    void everyAppliedEventIsAnnouncedOnceInOrderAndNothingElseIs() throws Exception {
        String prefix = "ann-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        List<UUID> applied = new ArrayList<>();
        UUID conflicting = UUID.randomUUID();
        try (PaymentProducer producer =
                new PaymentProducer(consumer.settings(), consumer.settings().get("PAYMENTS_QUEUE"))) {
            for (int i = 0; i < 60; i++) {
                UUID eventId = UUID.randomUUID();
                String body = PaymentProducer.json(eventId, prefix + (i % 3), 100 + i);
                producer.sendText(body);
                producer.sendText(body); // a duplicate: no second announcement
                applied.add(eventId);
            }
            producer.sendText(PaymentProducer.json(conflicting, prefix + "c", 5));
            applied.add(conflicting);
            producer.sendText(
                    PaymentProducer.json(conflicting, prefix + "c", 6)); // a conflict: moved aside, unannounced
            producer.sendText("{\"eventId\": \"not a uuid\"}"); // rejected: unannounced
        }
        await().atMost(PATIENCE)
                .untilAsserted(() ->
                        assertThat(consumer.ledger().processedCount(applied)).isEqualTo(61));

        List<Received> mine = receiveFor(prefix, 61);

        assertThat(mine).extracting(Received::eventId).containsExactlyInAnyOrderElementsOf(applied);
        assertThat(AnnouncementSubscriber.lastPerAccount(mine))
                .as("every account's last sequence: its number of payments")
                .hasSize(4)
                .allSatisfy((account, last) ->
                        assertThat(last.sequence()).as(account).isEqualTo(account.endsWith("c") ? 1 : 20));
        assertThat(AnnouncementSubscriber.violations(mine)).isEmpty();
        AnnouncementSubscriber.lastPerAccount(mine)
                .forEach((account, last) -> assertThat(last.balanceCents())
                        .as(account)
                        .isEqualTo(consumer.ledger().balance(account)));
        HttpResponse<String> state = consumer.admin().get("/admin/announcements/events/" + applied.get(0));
        assertThat(state.statusCode()).isEqualTo(200);
        JsonObject first = AdminClient.array(state).getJsonObject(0);
        assertThat(first.getString("state")).isEqualTo("SENT");
        assertThat(first.getJsonNumber("sequence").longValue()).isEqualTo(1);
        assertThat(consumer.admin()
                        .get("/admin/announcements/events/" + UUID.randomUUID())
                        .statusCode())
                .isEqualTo(404);
    }

    /**
     * From a payment's commit ({@code appliedAt}, the database's clock just before it) to its announcement on a
     * subscriber (this machine's clock, the same one), for payments sent one at a time at {@link #LIGHT_RATE} a second.
     */
    @Test
    void announcementsReachASubscriberWithinASecondOfTheirCommit() throws Exception {
        String prefix = "delay-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        ScheduledExecutorService pacer = Executors.newSingleThreadScheduledExecutor();
        PaymentProducer producer =
                new PaymentProducer(consumer.settings(), consumer.settings().get("PAYMENTS_QUEUE"));
        AtomicInteger sent = new AtomicInteger();
        try {
            pacer.scheduleAtFixedRate(
                    () -> {
                        int i = sent.getAndIncrement();
                        if (i < LIGHT_PAYMENTS) {
                            try {
                                producer.sendText(PaymentProducer.json(UUID.randomUUID(), prefix + (i % 10), 100));
                            } catch (JMSException e) {
                                throw new IllegalStateException(e);
                            }
                        }
                    },
                    0,
                    1000 / LIGHT_RATE,
                    TimeUnit.MILLISECONDS);

            List<Duration> delays = receiveFor(prefix, LIGHT_PAYMENTS).stream()
                    .map(Received::delay)
                    .sorted()
                    .toList();

            Duration p50 = delays.get(delays.size() / 2);
            Duration p99 = delays.get((int) Math.ceil(delays.size() * 0.99) - 1);
            System.out.printf(
                    "announcement delay at %d payments/s: p50 %d ms, p99 %d ms, max %d ms%n",
                    LIGHT_RATE,
                    p50.toMillis(),
                    p99.toMillis(),
                    delays.get(delays.size() - 1).toMillis());
            assertThat(delays.get(0)).as("no announcement before its commit").isGreaterThanOrEqualTo(Duration.ZERO);
            assertThat(p99)
                    .as("99th percentile of commit to announcement (p50 %d ms)", p50.toMillis())
                    .isLessThanOrEqualTo(DELAY_P99);
        } finally {
            pacer.shutdownNow();
            producer.close();
        }
    }

    @Test
    void reannouncementPublishesTheAccountAgainInOrderFromTheGivenSequence() throws Exception {
        String account = "reann-" + UUID.randomUUID().toString().substring(0, 8);
        applyPayments(account, 5);
        List<Received> first = receiveFor(account, 5);
        assertThat(first).extracting(Received::sequence).containsExactly(1L, 2L, 3L, 4L, 5L);

        HttpResponse<String> answer =
                consumer.admin().post("/admin/announcements/accounts/" + account + "/reannounce?fromSequence=3");

        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
        assertThat(AdminClient.json(answer).getInt("reannounced")).isEqualTo(3);
        List<Received> again = receiveFor(account, 3);
        assertThat(again).extracting(Received::sequence).containsExactly(3L, 4L, 5L);
        assertThat(again)
                .extracting(Received::eventId)
                .containsExactlyElementsOf(
                        first.subList(2, 5).stream().map(Received::eventId).toList());
        assertThat(again)
                .extracting(Received::balanceCents)
                .containsExactlyElementsOf(
                        first.subList(2, 5).stream().map(Received::balanceCents).toList());
        assertThat(consumer.admin()
                        .post("/admin/announcements/accounts/" + account + "/reannounce")
                        .statusCode())
                .isEqualTo(400);
        assertThat(consumer.admin()
                        .post("/admin/announcements/accounts/nobody-" + account + "/reannounce?fromSequence=1")
                        .statusCode())
                .isEqualTo(404);
    }

    /**
     * What a relay that died between sending a batch and marking it leaves: rows sent but unmarked. Together with new
     * rows of the same account in one batch: the broker rolls back a transacted batch holding a duplicate, and the
     * relay must neither loop on it nor lose the new rows with it.
     */
    @Test
    void aBatchHoldingResendsIsNotRepeatedForEverAndTheNewRowsInItArePublishedOnce() throws Exception {
        String account = "resend-" + UUID.randomUUID().toString().substring(0, 8);
        applyPayments(account, 4);
        assertThat(receiveFor(account, 4)).hasSize(4);
        InstanceMetrics metrics = new InstanceMetrics(consumer.process());
        double republished = metrics.gauge("announcement_republished_total");

        // One statement: the relay sees the four unmarked rows and the two new ones in the same pass.
        try (Connection db = Database.connect(consumer.settings());
                PreparedStatement unmark = db.prepareStatement("""
                WITH unmarked AS (UPDATE payment_announcements SET sent_at = NULL WHERE account_id = ? RETURNING id)
                SELECT count(*) FROM unmarked""")) {
            unmark.setString(1, account);
            try (ResultSet rows = unmark.executeQuery()) {
                rows.next();
                assertThat(rows.getLong(1)).isEqualTo(4);
            }
        }
        List<UUID> later = applyPayments(account, 2);

        List<Received> received = receiveFor(account, 2);
        assertThat(received).extracting(Received::eventId).containsExactlyInAnyOrderElementsOf(later);
        assertThat(received).extracting(Received::sequence).containsExactly(5L, 6L);
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(unsent(account)).isZero());
        assertThat(metrics.gauge("announcement_republished_total")).isGreaterThanOrEqualTo(republished + 4);
    }

    /**
     * The outbox's own retention, to the minute: a row sent a minute past the window is purged, one sent a minute short
     * of it is kept (applied long before: the window runs from the send), and an unsent row is kept however old.
     */
    @Test
    void sentAnnouncementsArePurgedAfterTheirWindowAndUnsentOnesNever() throws Exception {
        String account = "purge-" + UUID.randomUUID().toString().substring(0, 8);
        int days = Integer.parseInt(consumer.settings().get("ANNOUNCEMENT_RETENTION_DAYS"));
        Duration window = Duration.ofDays(days);
        // Rows an earlier run left in the shared database that have passed the window since: gone before the count.
        consumer.admin().postJson("/admin/announcements/purge");
        try (Connection db = Database.connect(consumer.settings())) {
            OutboxRows.insert(db, account, 1, window.plusDays(1), window.plusMinutes(1));
            OutboxRows.insert(db, account, 2, window.plusDays(1), window.minusMinutes(1));
            OutboxRows.insert(db, account, 3, window.multipliedBy(4), null);
        }

        JsonObject run = consumer.admin().postJson("/admin/announcements/purge");

        assertThat(OutboxRows.sequences(consumer.settings(), account))
                .as("sequences left after the purge (%s)", run)
                .containsExactly(2L, 3L);
        assertThat(run.getJsonNumber("deleted").longValue())
                .as("rows the purge says it deleted")
                .isEqualTo(1);
    }

    private static List<UUID> applyPayments(String account, int count) throws JMSException {
        List<UUID> events = new ArrayList<>();
        try (PaymentProducer producer =
                new PaymentProducer(consumer.settings(), consumer.settings().get("PAYMENTS_QUEUE"))) {
            for (int i = 0; i < count; i++) {
                UUID eventId = UUID.randomUUID();
                producer.sendText(PaymentProducer.json(eventId, account, 10 + i));
                events.add(eventId);
            }
        }
        await().atMost(PATIENCE)
                .untilAsserted(() ->
                        assertThat(consumer.ledger().processedCount(events)).isEqualTo(count));
        return events;
    }

    /**
     * This test's announcements: waits for {@code count}, then until the relay has marked every row of these accounts
     * sent, then takes what the queue still holds: a copy published late (a second send of a row) is among them,
     * however long after the others it came.
     */
    private static List<Received> receiveFor(String accountPrefix, int count) throws Exception {
        List<Received> mine = new ArrayList<>();
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (mine.size() < count && System.nanoTime() < deadline) {
            mine.addAll(receiveQuiet(accountPrefix));
        }
        await().atMost(PATIENCE).until(() -> unsentOf(accountPrefix) == 0);
        mine.addAll(receiveQuiet(accountPrefix));
        assertThat(mine).as("announcements of " + accountPrefix).hasSize(count);
        return mine;
    }

    private static List<Received> receiveQuiet(String accountPrefix) throws JMSException {
        return subscriber.receiveUntilQuiet(QUIET).stream()
                .filter(r -> r.accountId().startsWith(accountPrefix))
                .toList();
    }

    private static long unsentOf(String accountPrefix) throws SQLException {
        try (Connection db = Database.connect(consumer.settings());
                PreparedStatement query = db.prepareStatement(
                        "SELECT count(*) FROM payment_announcements WHERE account_id LIKE ? AND sent_at IS NULL")) {
            query.setString(1, accountPrefix + "%");
            try (ResultSet row = query.executeQuery()) {
                row.next();
                return row.getLong(1);
            }
        }
    }

    private static long unsent(String account) throws SQLException {
        try (Connection db = Database.connect(consumer.settings());
                PreparedStatement query = db.prepareStatement(
                        "SELECT count(*) FROM payment_announcements WHERE account_id = ? AND sent_at IS NULL")) {
            query.setString(1, account);
            try (ResultSet row = query.executeQuery()) {
                row.next();
                return row.getLong(1);
            }
        }
    }
}
