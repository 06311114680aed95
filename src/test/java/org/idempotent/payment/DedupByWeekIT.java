package org.idempotent.payment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.TextMessage;
import jakarta.json.JsonObject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.idempotent.delivery.control.MessageProperties;
import org.idempotent.fixtures.Jdbc;
import org.idempotent.fixtures.RunningConsumer;
import org.idempotent.loadgen.PaymentProducer;
import org.idempotent.stack.Database;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * processed_events partitioned by the week each event occurred (DEDUP_PARTITIONING=week), on a database of its own:
 * an event is applied once however its copies fall on the days, and the purge drops a week only when the dedup horizon
 * already quarantines every event it could hold.
 */
class DedupByWeekIT {

    private static final Duration PATIENCE = Duration.ofSeconds(60);
    private static final int WINDOW_DAYS = 14;

    @RegisterExtension
    static final RunningConsumer consumer = RunningConsumer.on("dedup-by-week-it", "it.byweek")
            .ownDatabase("payments_it_byweek")
            .with("DEDUP_PARTITIONING", "week")
            .with("RETENTION_DAYS", String.valueOf(WINDOW_DAYS))
            .with("RETENTION_SCHEDULE", "month=1;dayOfMonth=1;hour=0;minute=0");

    private static final LocalDate TODAY = LocalDate.now(ZoneOffset.UTC);

    /** This week's partition is made ahead; on a Monday yesterday is in last week's. */
    @BeforeAll
    static void yesterdayHasAPartition() throws SQLException {
        sql("SELECT processed_events_partition(?)", TODAY.minusDays(1));
    }

    @Test
    void anEventIsPlacedOnTheDayItOccurredAndItsCopyIsADuplicate() throws Exception {
        String account = account();
        UUID eventId = UUID.randomUUID();
        Instant lastMomentOfYesterday =
                TODAY.atStartOfDay().toInstant(ZoneOffset.UTC).minusMillis(500);

        send(eventId, account, 100, lastMomentOfYesterday);
        awaitBalance(account, 100);
        long duplicates = consumer.metrics().outcome("duplicate");
        send(eventId, account, 100, lastMomentOfYesterday);

        await().atMost(PATIENCE)
                .untilAsserted(() ->
                        assertThat(consumer.metrics().outcome("duplicate")).isEqualTo(duplicates + 1));
        assertThat(consumer.ledger().balance(account)).isEqualTo(100);
        assertThat(placement(eventId)).containsExactly(where(TODAY.minusDays(1)));
    }

    /**
     * An event without occurredAt is placed on the day it is processed; its copy arriving on a later day would be placed
     * on that day, where the unique key does not see the first record: the claim does. Between the two, another
     * payment to the account, so that the account's guard (the last event applied) cannot stand in for it.
     */
    @Test
    void aCopyArrivingOnALaterDayOfAnEventWithoutOccurredAtIsADuplicate() throws Exception {
        String account = account();
        UUID eventId = UUID.randomUUID();
        send(eventId, account, 200, null);
        awaitBalance(account, 200);
        sql(
                "UPDATE processed_events SET event_day = event_day - 1, processed_at = processed_at - interval '1 day'"
                        + " WHERE event_id = ?",
                eventId);
        send(UUID.randomUUID(), account, 1, null);
        awaitBalance(account, 201);
        long duplicates = consumer.metrics().outcome("duplicate");

        send(eventId, account, 200, null);

        await().atMost(PATIENCE)
                .untilAsserted(() ->
                        assertThat(consumer.metrics().outcome("duplicate")).isEqualTo(duplicates + 1));
        assertThat(consumer.ledger().balance(account)).isEqualTo(201);
        assertThat(placement(eventId)).containsExactly(where(TODAY.minusDays(1)));
    }

    /** A producer's bug: the same event ID with occurredAt on another day. Applied once, recorded once. */
    @Test
    void theSameEventIdWithOccurredAtOnAnotherDayIsAppliedOnce() throws Exception {
        String account = account();
        UUID eventId = UUID.randomUUID();
        send(eventId, account, 300, Instant.now().minus(Duration.ofDays(1)));
        awaitBalance(account, 300);
        send(UUID.randomUUID(), account, 1, null);
        awaitBalance(account, 301);
        long duplicates = consumer.metrics().outcome("duplicate");

        send(eventId, account, 300, Instant.now());

        await().atMost(PATIENCE)
                .untilAsserted(() ->
                        assertThat(consumer.metrics().outcome("duplicate")).isEqualTo(duplicates + 1));
        assertThat(consumer.ledger().balance(account)).isEqualTo(301);
        assertThat(placement(eventId)).containsExactly(where(TODAY.minusDays(1)));
    }

    /**
     * Two deliveries of one event on two days at once, as the application's transaction runs them (claim, then
     * insert): the second claim waits for the first transaction and then sees its record.
     */
    @Test
    void twoDeliveriesPlacedOnTwoDaysAtOnceAreSerialisedByTheClaim() throws Exception {
        UUID eventId = UUID.randomUUID();
        try (Connection first = Database.connectAsApplication(consumer.settings());
                Connection second = Database.connectAsApplication(consumer.settings())) {
            first.setAutoCommit(false);
            second.setAutoCommit(false);
            assertThat(claim(first, eventId)).isTrue();
            insert(first, eventId, TODAY);

            CompletableFuture<Boolean> secondClaim = CompletableFuture.supplyAsync(() -> claim(second, eventId));
            Thread.sleep(1_000); // the claim must still be waiting after a second, so a wait is what is asserted
            assertThat(secondClaim)
                    .as("the second claim waits for the first transaction")
                    .isNotDone();
            first.commit();

            assertThat(secondClaim.get(10, TimeUnit.SECONDS))
                    .as("the second claim, once the first committed")
                    .isFalse();
            second.rollback();
        }
    }

    /** A producer's clock a month ahead: past the weeks made ahead, so the default partition takes it. */
    @Test
    void anEventOfAWeekWithoutAPartitionGoesToTheDefaultPartition() throws Exception {
        String account = account();
        UUID aMonthAhead = UUID.randomUUID();
        LocalDate day = TODAY.plusDays(30);

        send(aMonthAhead, account, 500, day.atTime(12, 0).toInstant(ZoneOffset.UTC));

        awaitBalance(account, 500);
        assertThat(placement(aMonthAhead)).containsExactly("processed_events_default " + day);
    }

    @Test
    void theNextWeekHasAPartitionBeforeItBegins() throws Exception {
        assertThat(partitions()).contains(partitionOf(TODAY), partitionOf(TODAY.plusDays(7)));
    }

    /**
     * With a window of 14 days, the week of 21 days ago ended 14 days ago or earlier and is dropped; the week of 14
     * days ago ended less than 14 days ago and is kept. A copy of an event of the dropped week is older than the dedup
     * horizon (13 days) and, without its record, is quarantined as STALE, not applied. The default partition is purged
     * row by row.
     */
    @Test
    void aWeekIsDroppedOnceTheWindowHasPassedItsEndAndACopyOfItsEventsIsThenQuarantined() throws Exception {
        LocalDate expired = TODAY.minusDays(WINDOW_DAYS + 7);
        LocalDate kept = TODAY.minusDays(WINDOW_DAYS);
        UUID eventOfExpiredWeek = UUID.randomUUID();
        for (LocalDate day : List.of(expired, kept)) {
            sql("SELECT processed_events_partition(?)", day);
            sql(
                    "INSERT INTO processed_events (event_id, event_day, processed_at) SELECT gen_random_uuid(), ?,"
                            + " now() - interval '15 days' FROM generate_series(1, 1000)",
                    day);
        }
        sql(
                "INSERT INTO processed_events (event_id, event_day, processed_at) VALUES (?, ?, now() - interval '15 days')",
                eventOfExpiredWeek,
                expired);
        UUID youngInDefault = UUID.randomUUID();
        UUID oldInDefault = UUID.randomUUID();
        sql("INSERT INTO processed_events (event_id, event_day) VALUES (?, ?)", youngInDefault, TODAY.plusDays(30));
        sql(
                "INSERT INTO processed_events (event_id, event_day, processed_at) VALUES (?, ?, now() - interval '15 days')",
                oldInDefault,
                TODAY.plusDays(30));

        JsonObject run = consumer.admin().postJson("/admin/retention/purge");

        assertThat(run.getString("outcome")).isEqualTo("COMPLETED");
        assertThat(run.getJsonNumber("rowsDeleted").longValue()).isEqualTo(1001 + 1);
        assertThat(partitions()).doesNotContain(partitionOf(expired)).contains(partitionOf(kept));
        assertThat(consumer.ledger().isProcessed(youngInDefault)).isTrue();
        assertThat(consumer.ledger().isProcessed(oldInDefault)).isFalse();

        String account = account();
        try (DeadLetterReader quarantine =
                new DeadLetterReader(consumer.settings(), consumer.settings().get("QUARANTINE_QUEUE"))) {
            String probe =
                    send(eventOfExpiredWeek, account, 600, expired.atTime(12, 0).toInstant(ZoneOffset.UTC));
            Message moved =
                    quarantine.receive("probe = '" + probe + "'", 1, PATIENCE).get(0);
            assertThat(moved.getStringProperty(MessageProperties.REASON)).isEqualTo("STALE");
        }
        assertThat(consumer.ledger().balance(account)).isNull();
    }

    private static boolean claim(Connection connection, UUID eventId) {
        try (PreparedStatement claim = connection.prepareStatement("SELECT processed_event_claim(?)")) {
            claim.setObject(1, eventId);
            try (ResultSet row = claim.executeQuery()) {
                row.next();
                return row.getBoolean(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void insert(Connection connection, UUID eventId, LocalDate day) throws SQLException {
        try (PreparedStatement insert =
                connection.prepareStatement("INSERT INTO processed_events (event_id, event_day) VALUES (?, ?)")) {
            insert.setObject(1, eventId);
            insert.setObject(2, day);
            insert.executeUpdate();
        }
    }

    /** The partition and the day of every record of the event. */
    private static List<String> placement(UUID eventId) throws SQLException {
        return strings(
                "SELECT tableoid::regclass::text || ' ' || event_day FROM processed_events WHERE event_id = ?",
                eventId);
    }

    /** A record's placement on {@code day}, in its week's partition. */
    private static String where(LocalDate day) {
        return partitionOf(day) + " " + day;
    }

    private static String partitionOf(LocalDate day) {
        return "processed_events_p" + day.with(DayOfWeek.MONDAY).toString().replace("-", "");
    }

    private static List<String> partitions() throws SQLException {
        return strings("SELECT relid::text FROM pg_partition_tree('processed_events') WHERE isleaf");
    }

    private static List<String> strings(String query, Object... parameters) throws SQLException {
        try (Connection connection = Database.connect(consumer.settings());
                PreparedStatement statement = Jdbc.prepare(connection, query, parameters);
                ResultSet rows = statement.executeQuery()) {
            List<String> values = new ArrayList<>();
            while (rows.next()) {
                values.add(rows.getString(1));
            }
            return values;
        }
    }

    private static void sql(String statement, Object... parameters) throws SQLException {
        try (Connection connection = Database.connect(consumer.settings());
                PreparedStatement prepared = Jdbc.prepare(connection, statement, parameters)) {
            prepared.execute();
        }
    }

    private static void awaitBalance(String account, long cents) {
        await().atMost(PATIENCE)
                .untilAsserted(
                        () -> assertThat(consumer.ledger().balance(account)).isEqualTo(cents));
    }

    private static String send(UUID eventId, String account, long amount, Instant occurredAt) throws JMSException {
        String json = PaymentProducer.json(eventId, account, amount, occurredAt);
        String probe = UUID.randomUUID().toString();
        try (PaymentProducer producer = new PaymentProducer(consumer.settings())) {
            TextMessage message = producer.session().createTextMessage(json);
            message.setStringProperty("probe", probe);
            producer.send(message);
        }
        return probe;
    }

    private static String account() {
        return "day-" + UUID.randomUUID().toString().substring(0, 8);
    }
}
