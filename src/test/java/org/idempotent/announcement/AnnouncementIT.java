package org.idempotent.announcement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import jakarta.jms.JMSException;
import jakarta.json.JsonObject;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.idempotent.announcement.control.Relay;
import org.idempotent.fixtures.AnnouncementSubscriber;
import org.idempotent.fixtures.AnnouncementSubscriber.Received;
import org.idempotent.fixtures.OutboxRows;
import org.idempotent.fixtures.RunningConsumer;
import org.idempotent.fixtures.SideBySide;
import org.idempotent.loadgen.PaymentProducer;
import org.idempotent.stack.AdminClient;
import org.idempotent.stack.Database;
import org.idempotent.stack.InstanceMetrics;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceAccessMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * The outbox as a downstream service meets it: a subscriber on the announcement address's durable queue, compared
 * with the ledger. The class has its PostgreSQL cluster, broker and Payara Micro to itself and runs beside the other
 * classes: most of its time is waiting (a minute of a session idle in its transaction, which would hold back every
 * relay of a cluster it shared), and its own tests tell their announcements apart by account.
 */
@Execution(ExecutionMode.CONCURRENT)
@ResourceLock(SideBySide.LANE)
@ResourceLock(value = SideBySide.FAULT_TIMING, mode = ResourceAccessMode.READ)
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
    /** How long a session stays idle in its transaction (issue 38: a minute). */
    private static final Duration IDLE = Duration.ofSeconds(60);

    @RegisterExtension
    static final RunningConsumer consumer = RunningConsumer.on("announcement-it", "it.announcement")
            .alone()
            // The outbox's purge timer stays out of the way: the purge test counts what the purges it starts delete.
            .with("ANNOUNCEMENT_PURGE_SCHEDULE", "month=1;dayOfMonth=1;hour=0;minute=0");

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

    /**
     * A session idle in a transaction anywhere in the cluster holds the relay's horizon for {@link #IDLE}: the
     * announcements of payments committed meanwhile wait, the oldest-unsent gauge shows the delay and the health check
     * names the session; when it ends, every one goes out, once and in each account's order.
     */
    @Test
    void aSessionIdleInTransactionDelaysAnnouncementsAndLosesOrReordersNone() throws Exception {
        String prefix = "idle-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        InstanceMetrics metrics = new InstanceMetrics(consumer.process());
        ScheduledExecutorService pacer = Executors.newSingleThreadScheduledExecutor();
        List<UUID> sent = new ArrayList<>();
        try (Connection idle = Database.connect(consumer.settings());
                Statement session = idle.createStatement();
                PaymentProducer producer = new PaymentProducer(
                        consumer.settings(), consumer.settings().get("PAYMENTS_QUEUE"))) {
            idle.setAutoCommit(false);
            int pid;
            try (ResultSet row = session.executeQuery("SELECT pg_backend_pid(), pg_current_xact_id()")) {
                row.next();
                pid = row.getInt(1);
            }
            long heldUntil = System.nanoTime() + IDLE.toNanos();
            pacer.scheduleAtFixedRate(
                    () -> {
                        if (System.nanoTime()
                                < heldUntil - Duration.ofSeconds(5).toNanos()) {
                            UUID eventId = UUID.randomUUID();
                            try {
                                producer.sendText(PaymentProducer.json(eventId, prefix + (sent.size() % 5), 100));
                            } catch (JMSException e) {
                                throw new IllegalStateException(e);
                            }
                            synchronized (sent) {
                                sent.add(eventId);
                            }
                        }
                    },
                    0,
                    200,
                    TimeUnit.MILLISECONDS);

            await().atMost(IDLE)
                    .until(() -> System.nanoTime()
                            >= heldUntil - Duration.ofSeconds(3).toNanos());
            pacer.shutdown();
            await().atMost(Duration.ofSeconds(10))
                    .untilAsserted(() -> assertThat(consumer.ledger().processedCount(List.copyOf(sent)))
                            .as("payments applied while the session was idle")
                            .isEqualTo(sent.size()));
            assertThat(receiveQuiet(prefix))
                    .as("announcements published while it was")
                    .isEmpty();
            assertThat(metrics.gauge("announcement_oldest_unsent_age_seconds"))
                    .as("the delay in the oldest-unsent gauge")
                    .isGreaterThanOrEqualTo(IDLE.minusSeconds(15).toSeconds());
            assertThat(AdminClient.json(HttpClient.newHttpClient()
                                    .send(
                                            HttpRequest.newBuilder(
                                                            consumer.process().uri("/health/ready"))
                                                    .build(),
                                            BodyHandlers.ofString()))
                            .toString())
                    .as("the readiness check")
                    .contains("heldBackBy", "pid " + pid);
            await().atMost(IDLE).until(() -> System.nanoTime() >= heldUntil);
            idle.rollback();
        } finally {
            pacer.shutdownNow();
        }

        List<Received> mine = receiveFor(prefix, sent.size());
        assertThat(mine).extracting(Received::eventId).containsExactlyInAnyOrderElementsOf(sent);
        assertThat(AnnouncementSubscriber.violations(mine)).isEmpty();
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
     * Transaction-ID order is not an account's order: a payment that took its ID first may take the account's lock
     * second. Here the account's first row is written by a later transaction than its second, and a transaction with
     * an ID between the two is still running: the second row is within the relay's reach and the first is not. The
     * second waits for the first, and both go out in order once the middle one ends.
     */
    @Test
    void aRowWaitsForAnEarlierRowOfItsAccountThatIsNotYetWithinReach() throws Exception {
        String account = "order-" + UUID.randomUUID().toString().substring(0, 8);
        List<Received> early = new ArrayList<>();
        try (Connection first = Database.connect(consumer.settings());
                Connection middle = Database.connect(consumer.settings());
                Connection second = Database.connect(consumer.settings())) {
            for (Connection db : List.of(first, middle, second)) {
                db.setAutoCommit(false);
            }
            LocalDate today = OutboxRows.daysAgo(first, 0);
            for (Connection db : List.of(second, middle, first)) {
                try (Statement id = db.createStatement()) {
                    id.execute("SELECT pg_current_xact_id()");
                }
            }
            OutboxRows.insert(first, account, 1, today);
            first.commit();
            OutboxRows.insert(second, account, 2, today);
            second.commit();

            // Past the relay's 5 s timer: sequence 2 alone must not go.
            await().during(Duration.ofSeconds(6)).atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                early.addAll(receiveQuiet(account));
                assertThat(early)
                        .as("published while the middle transaction ran")
                        .isEmpty();
            });
            middle.rollback();
        }

        assertThat(receiveFor(account, 2)).extracting(Received::sequence).containsExactly(1L, 2L);
    }

    /**
     * What a relay that stopped mid-window leaves: the window recorded as being published, its rows perhaps sent, the
     * position not moved. Together with new rows of the same account in the next pass: the broker rolls back a
     * transacted page holding a duplicate, and the relay must neither loop on it nor lose the new rows with it; the
     * rows sent again are counted as resends.
     */
    @Test
    void aWindowLeftMidWayIsNotRepeatedForEverAndTheNewRowsAfterItArePublishedOnce() throws Exception {
        String account = "resend-" + UUID.randomUUID().toString().substring(0, 8);
        applyPayments(account, 4);
        assertThat(receiveFor(account, 4)).hasSize(4);
        InstanceMetrics metrics = new InstanceMetrics(consumer.process());
        double republished = metrics.gauge("announcement_republished_total");

        try (Connection db = Database.connect(consumer.settings());
                Statement relayLock = db.createStatement();
                PreparedStatement rewind = db.prepareStatement("""
                        UPDATE announcement_relay
                           SET position = (SELECT min(xid) FROM payment_announcements WHERE account_id = ?),
                               window_end = pg_snapshot_xmin(pg_current_snapshot()), sent_through = 0,
                               attempted_through = (SELECT max(id) FROM payment_announcements WHERE account_id = ?)""")) {
            // The relay held off while its state is set back to that of one that stopped publishing these rows.
            relayLock.execute("SELECT pg_advisory_lock(" + Relay.RELAY_LOCK + ")");
            rewind.setString(1, account);
            rewind.setString(2, account);
            assertThat(rewind.executeUpdate()).isEqualTo(1);
            relayLock.execute("SELECT pg_advisory_unlock(" + Relay.RELAY_LOCK + ")");
        }
        List<UUID> later = applyPayments(account, 2);

        List<Received> received = receiveFor(account, 2);
        assertThat(received).extracting(Received::eventId).containsExactlyInAnyOrderElementsOf(later);
        assertThat(received).extracting(Received::sequence).containsExactly(5L, 6L);
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(OutboxRows.unsent(consumer.settings(), account))
                        .isZero());
        assertThat(metrics.gauge("announcement_republished_total")).isGreaterThanOrEqualTo(republished + 4);
        HttpResponse<String> state = consumer.admin().get("/admin/announcements/events/" + firstOf(account));
        assertThat(AdminClient.array(state).getJsonObject(0).getInt("sendAttempts"))
                .as("publications of the account's first row")
                .isEqualTo(2);
    }

    /**
     * The outbox's own retention, by day: a day past the window whose rows are all published goes whole, a day inside
     * it stays, and unpublished rows stay however old, in a day's partition or in the default one.
     */
    @Test
    void publishedDaysAreDroppedAfterTheirWindowAndUnsentRowsNever() throws Exception {
        String account = "purge-" + UUID.randomUUID().toString().substring(0, 8);
        int days = Integer.parseInt(consumer.settings().get("ANNOUNCEMENT_RETENTION_DAYS"));
        try (Connection db = Database.connect(consumer.settings());
                Statement relayLock = db.createStatement()) {
            LocalDate[] published = OutboxRows.pastAndInside(db, account, days);
            await().atMost(PATIENCE).until(() -> OutboxRows.unsent(consumer.settings(), account) == 0);
            // Rows of the earlier tests, and the closing of these days: the first purge.
            consumer.admin().postJson("/admin/announcements/purge");
            await().atMost(OutboxRows.CLOSING_PASSED)
                    .until(() -> OutboxRows.closedAndPassed(consumer.settings(), published));

            relayLock.execute("SELECT pg_advisory_lock(" + Relay.RELAY_LOCK + ")");
            try {
                LocalDate unsentDay = OutboxRows.daysAgo(db, days * 4);
                OutboxRows.partition(db, unsentDay);
                OutboxRows.insert(db, account, 3, unsentDay);
                OutboxRows.insert(db, account, 4, OutboxRows.daysAgo(db, days * 5)); // no partition: the default
                JsonObject run = consumer.admin().postJson("/admin/announcements/purge");

                assertThat(OutboxRows.sequences(consumer.settings(), account))
                        .as("sequences left after the purge (%s)", run)
                        .containsExactly(2L, 3L, 4L);
                assertThat(run.getJsonNumber("deleted").longValue())
                        .as("rows the purge says went")
                        .isEqualTo(1);
            } finally {
                relayLock.execute("SELECT pg_advisory_unlock(" + Relay.RELAY_LOCK + ")");
            }
        }
        await().atMost(PATIENCE).until(() -> OutboxRows.unsent(consumer.settings(), account) == 0);
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
        await().atMost(PATIENCE).until(() -> OutboxRows.unsent(consumer.settings(), accountPrefix) == 0);
        mine.addAll(receiveQuiet(accountPrefix));
        assertThat(mine).as("announcements of " + accountPrefix).hasSize(count);
        return mine;
    }

    private static List<Received> receiveQuiet(String accountPrefix) throws JMSException {
        return subscriber.receiveUntilQuiet(QUIET).stream()
                .filter(r -> r.accountId().startsWith(accountPrefix))
                .toList();
    }

    private static UUID firstOf(String account) throws SQLException {
        try (Connection db = Database.connect(consumer.settings());
                PreparedStatement query = db.prepareStatement(
                        "SELECT event_id FROM payment_announcements WHERE account_id = ? AND account_sequence = 1")) {
            query.setString(1, account);
            try (ResultSet row = query.executeQuery()) {
                row.next();
                return row.getObject(1, UUID.class);
            }
        }
    }
}
