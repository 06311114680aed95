package org.idempotent.payment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.TextMessage;
import jakarta.json.JsonObject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.idempotent.delivery.control.MessageProperties;
import org.idempotent.delivery.entity.ProcessedEvent;
import org.idempotent.fixtures.Jdbc;
import org.idempotent.fixtures.RunningConsumer;
import org.idempotent.loadgen.PaymentProducer;
import org.idempotent.stack.Database;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;
import org.postgresql.util.PSQLException;

/**
 * processed_events partitioned by event ID (DEDUP_PARTITIONING=id), on a database of its
 * own: a copy lands where its original is whatever it says of its time, the purge drops a day of v7 IDs only when the
 * dedup horizon already quarantines every event it could hold, and an insert never fails for want of a partition.
 */
class DedupByIdIT {

    private static final Duration PATIENCE = Duration.ofSeconds(60);
    private static final int WINDOW_DAYS = 14;

    @RegisterExtension
    static final RunningConsumer consumer = RunningConsumer.on("dedup-by-id-it", "it.byid")
            .ownDatabase("payments_it_byid")
            .with("DEDUP_PARTITIONING", "id")
            .with("RETENTION_DAYS", String.valueOf(WINDOW_DAYS))
            .with("RETENTION_SCHEDULE", "month=1;dayOfMonth=1;hour=0;minute=0");

    /**
     * How far from the database's midnight (UTC) a purge test starts: a purge counts expired days at its own instant,
     * and one that ran past midnight would find a day more expired than its setup made. The admin client waits up to 5
     * minutes for a purge's answer; a minute more for the setup.
     */
    private static final Duration CLEAR_OF_MIDNIGHT = Duration.ofMinutes(6);

    /**
     * A producer's bug: a copy of an event re-stamped into another week (occurredAt eight days earlier, then eight days
     * later). Its ID is its original's, so is its partition: the key refuses it. Between the copies, another payment
     * to the account, so that the account's guard (the last event applied) cannot stand in for the key.
     */
    @Test
    void aCopyReStampedIntoAnotherWeekIsADuplicate() throws Exception {
        String account = account();
        Instant made = Instant.now();
        UUID eventId = uuid7(made);
        Instant occurred = Instant.now();
        send(eventId, account, 300, occurred);
        awaitBalance(account, 300);
        long duplicates = consumer.metrics().outcome("duplicate");

        for (Instant restamped : List.of(occurred.minus(Duration.ofDays(8)), occurred.plus(Duration.ofDays(8)))) {
            send(uuid7(Instant.now()), account, 1, null);
            send(eventId, account, 300, restamped);
        }

        await().atMost(PATIENCE)
                .untilAsserted(() ->
                        assertThat(consumer.metrics().outcome("duplicate")).isEqualTo(duplicates + 2));
        awaitBalance(account, 302);
        assertThat(placement(eventId)).containsExactly(dayPartition(dayOf(made)));
    }

    /**
     * Copies of one event re-stamped into seven weeks (within the horizon: a copy that says it occurred longer ago
     * would be judged by its age), all sent at once to the consumer's sessions: applied once, recorded once, every
     * other copy a duplicate.
     */
    @Test
    void copiesReStampedIntoOtherWeeksAtOnceAreAppliedOnce() throws Exception {
        String account = account();
        Instant now = Instant.now();
        UUID eventId = uuid7(now);
        long duplicates = consumer.metrics().outcome("duplicate");

        try (PaymentProducer producer = new PaymentProducer(consumer.settings())) {
            for (int days : new int[] {-12, -7, 0, 7, 14, 21, 28, 35}) {
                producer.sendText(PaymentProducer.json(eventId, account, 400, now.plus(Duration.ofDays(days))));
            }
        }

        await().atMost(PATIENCE)
                .untilAsserted(() ->
                        assertThat(consumer.metrics().outcome("duplicate")).isEqualTo(duplicates + 7));
        assertThat(consumer.ledger().balance(account)).isEqualTo(400);
        assertThat(placement(eventId)).containsExactly(dayPartition(dayOf(now)));
    }

    /**
     * Two deliveries of one event at once, as the application's transaction runs them (one insert each): the second
     * waits for the first transaction, then its key refuses it, and the violation names a partition's key that the
     * consumer takes for the dedup key.
     */
    @Test
    void twoDeliveriesAtOnceAreSerialisedByTheKeyOfTheirDaysPartition() throws Exception {
        Instant made = Instant.now();
        UUID eventId = uuid7(made);
        try (Connection first = Database.connectAsApplication(consumer.settings());
                Connection second = Database.connectAsApplication(consumer.settings())) {
            first.setAutoCommit(false);
            second.setAutoCommit(false);
            int firstPid = first.unwrap(PGConnection.class).getBackendPID();
            int secondPid = second.unwrap(PGConnection.class).getBackendPID();
            insert(first, eventId);

            CompletableFuture<String> secondInsert = CompletableFuture.supplyAsync(() -> {
                try {
                    insert(second, eventId);
                    return "inserted";
                } catch (PSQLException e) {
                    return e.getServerErrorMessage().getConstraint();
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            });
            // The wait seen where the database keeps it, not guessed from a pause: a pause passes as well for an insert
            // that has not yet started, and fails for one that did not wait on a machine slow to get to the check.
            await().atMost(PATIENCE)
                    .failFast("the second insert finished without waiting", secondInsert::isDone)
                    .until(() -> bool("SELECT ? = ANY (pg_blocking_pids(?))", firstPid, secondPid));
            assertThat(secondInsert)
                    .as("the second insert waits for the first transaction")
                    .isNotDone();
            first.commit();

            String refusedBy = secondInsert.get(10, TimeUnit.SECONDS);
            assertThat(refusedBy).isEqualTo(dayPartition(dayOf(made)) + "_pkey");
            assertThat(ProcessedEvent.isDedupKey(refusedBy)).isTrue();
            second.rollback();
        }
    }

    /**
     * A v7 ID a month ahead (a producer's clock), past the days made ahead; a v4 ID; the nil UUID (version 0): each
     * has a partition to go to, and the day a month ahead gets no partition of its own once it has a row in the
     * default.
     */
    @Test
    void anInsertNeverFailsForAMissingPartition() throws Exception {
        String account = account();
        Instant aMonthFromNow = Instant.now().plus(Duration.ofDays(30));
        UUID aMonthAhead = uuid7(aMonthFromNow);
        UUID v4 = UUID.randomUUID();

        send(aMonthAhead, account, 500, null);
        send(v4, account, 20, null);

        awaitBalance(account, 520);
        assertThat(placement(aMonthAhead)).containsExactly("processed_events_v7_default");
        assertThat(placement(v4)).containsExactly("processed_events_other");
        sql("INSERT INTO processed_events (event_id, id_version) VALUES (?, 0)", new UUID(0, 0));
        assertThat(placement(new UUID(0, 0))).containsExactly("processed_events_other");
        assertThat(bool("SELECT processed_events_day_partition(?)", dayOf(aMonthFromNow)))
                .as("a day partition made with rows of the day in the default")
                .isFalse();
        assertThat(partitions()).doesNotContain(dayPartition(dayOf(aMonthFromNow)));
    }

    @Test
    void aRecordUnderAVersionThatIsNotItsIdsIsRefused() {
        assertThatThrownBy(() ->
                        sql("INSERT INTO processed_events (event_id, id_version) VALUES (?, 4)", uuid7(Instant.now())))
                .hasMessageContaining("processed_events_id_version");
    }

    @Test
    void yesterdayTodayAndTheNextThreeDaysHaveAPartition() throws Exception {
        // Today as the days ahead count it, read in their statement: the migration made them for the day the consumer
        // started, which is yesterday once this runs past midnight. On the day they were made, nothing new is made.
        LocalDate today =
                LocalDate.parse(strings("SELECT (now() AT TIME ZONE 'UTC')::date::text, processed_events_days_ahead()")
                        .get(0));
        assertThat(partitions())
                .contains(
                        dayPartition(today.minusDays(1)),
                        dayPartition(today),
                        dayPartition(today.plusDays(1)),
                        dayPartition(today.plusDays(3)));
    }

    /**
     * With a window of 14 days, the day 15 days ago ended 14 days ago: dropped; the day 14 days ago ended less than 14
     * days ago: kept. A copy of an event of the dropped day, even one whose message says it occurred now, is older
     * than the dedup horizon (13 days) by its ID and, without its record, is quarantined as STALE, not applied. The
     * default sub-partition and the table of other versions are purged row by row.
     */
    @Test
    void aDayIsDroppedOnceTheWindowHasPassedItsEndAndACopyOfItsEventsIsThenQuarantined() throws Exception {
        LocalDate today = databaseDayClearOfMidnight();
        LocalDate expired = today.minusDays(WINDOW_DAYS + 1);
        LocalDate kept = today.minusDays(WINDOW_DAYS);
        UUID eventOfExpiredDay = uuid7(expired.atTime(23, 59, 59).toInstant(ZoneOffset.UTC));
        UUID eventOfKeptDay = uuid7(kept.atTime(0, 0).toInstant(ZoneOffset.UTC));
        for (LocalDate day : List.of(expired, kept)) {
            assertThat(bool("SELECT processed_events_day_partition(?)", day)).isTrue();
        }
        for (UUID id : List.of(eventOfExpiredDay, eventOfKeptDay)) {
            sql("INSERT INTO processed_events (event_id, id_version, processed_at) VALUES (?, 7, now())", id);
        }
        UUID oldOther = UUID.randomUUID();
        UUID youngOther = UUID.randomUUID();
        UUID oldDefault = uuid7(Instant.now().plus(Duration.ofDays(40)));
        sql(
                "INSERT INTO processed_events (event_id, id_version, processed_at) VALUES"
                        + " (?, 4, now() - interval '15 days'), (?, 4, now()), (?, 7, now() - interval '15 days')",
                oldOther,
                youngOther,
                oldDefault);

        JsonObject run = consumer.admin().postJson("/admin/retention/purge");

        assertThat(run.getString("outcome")).isEqualTo("COMPLETED");
        assertThat(run.getJsonNumber("rowsDeleted").longValue())
                .as("the expired day's record, and the old ones of the other version and of the default")
                .isEqualTo(3);
        assertThat(partitions()).doesNotContain(dayPartition(expired)).contains(dayPartition(kept));
        assertThat(consumer.ledger().isProcessed(eventOfExpiredDay)).isFalse();
        assertThat(consumer.ledger().isProcessed(eventOfKeptDay)).isTrue();
        assertThat(consumer.ledger().isProcessed(oldOther)).isFalse();
        assertThat(consumer.ledger().isProcessed(youngOther)).isTrue();
        assertThat(consumer.ledger().isProcessed(oldDefault)).isFalse();

        String account = account();
        try (DeadLetterReader quarantine =
                new DeadLetterReader(consumer.settings(), consumer.settings().get("QUARANTINE_QUEUE"))) {
            String probe = send(eventOfExpiredDay, account, 600, Instant.now());
            Message moved =
                    quarantine.receive("probe = '" + probe + "'", 1, PATIENCE).get(0);
            assertThat(moved.getStringProperty(MessageProperties.REASON)).isEqualTo("STALE");
            assertThat(moved.getStringProperty(MessageProperties.ID_AGE_SECONDS))
                    .isNotNull();
        }
        assertThat(consumer.ledger().balance(account)).isNull();
    }

    /**
     * A detach locks processed_events_v7 exclusively, and every insert queues behind it while it waits for the
     * transactions in flight: it may wait 40 ms at a time, then rests and tries again. Here a delivery's transaction
     * stays open for 2 s: inserts beside it wait for no detach longer than that (with V12's 2 s wait, one waits up to
     * 2 s), and the purge still drops the day once the transaction ends.
     */
    @Test
    void aDetachHeldUpByATransactionInFlightMakesNoInsertWaitForIt() throws Exception {
        LocalDate expired = databaseDayClearOfMidnight().minusDays(WINDOW_DAYS + 1);
        assertThat(bool("SELECT processed_events_day_partition(?)", expired)).isTrue();
        sql(
                "INSERT INTO processed_events (event_id, id_version) VALUES (?, 7)",
                uuid7(expired.atTime(12, 0).toInstant(ZoneOffset.UTC)));
        List<Long> waits = new ArrayList<>();
        CompletableFuture<JsonObject> purge;
        try (Connection inFlight = Database.connect(consumer.settings());
                Connection beside = Database.connect(consumer.settings())) {
            inFlight.setAutoCommit(false);
            insert(inFlight, uuid7(Instant.now()));
            purge = CompletableFuture.supplyAsync(() -> consumer.admin().postJson("/admin/retention/purge"));
            long until = System.nanoTime() + Duration.ofSeconds(2).toNanos();
            while (System.nanoTime() < until) {
                long start = System.nanoTime();
                insert(beside, uuid7(Instant.now()));
                waits.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
            }
            assertThat(purge)
                    .as("the detach waits for the transaction in flight")
                    .isNotDone();
            inFlight.commit();
        }
        JsonObject run = purge.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);

        assertThat(waits).as("inserts beside the waiting detach").hasSizeGreaterThan(20);
        assertThat(waits.stream().mapToLong(Long::longValue).max().orElseThrow())
                .as("the longest insert, ms: a detach's wait of 40 ms at most, and this machine's scheduling")
                .isLessThan(250);
        assertThat(run.getString("outcome")).isEqualTo("COMPLETED");
        assertThat(partitions()).doesNotContain(dayPartition(expired));
    }

    /**
     * The database's UTC day, once at least {@link #CLEAR_OF_MIDNIGHT} is left of it (waiting for the next day
     * otherwise): the day a purge started now counts its expired days from.
     */
    private static LocalDate databaseDayClearOfMidnight() {
        String day = await().atMost(CLEAR_OF_MIDNIGHT.plus(PATIENCE))
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofSeconds(1))
                .until(
                        () -> strings(
                                        "SELECT CASE WHEN now() AT TIME ZONE 'UTC'"
                                                + " < (now() AT TIME ZONE 'UTC')::date + 1 - make_interval(secs => ?)"
                                                + " THEN (now() AT TIME ZONE 'UTC')::date::text END",
                                        (double) CLEAR_OF_MIDNIGHT.toSeconds())
                                .get(0),
                        Objects::nonNull);
        return LocalDate.parse(day);
    }

    /** The UTC day of {@code time}: the day partition of a v7 ID made at it. */
    private static LocalDate dayOf(Instant time) {
        return LocalDate.ofInstant(time, ZoneOffset.UTC);
    }

    private static void insert(Connection connection, UUID eventId) throws SQLException {
        try (PreparedStatement insert =
                connection.prepareStatement("INSERT INTO processed_events (event_id, id_version) VALUES (?, ?)")) {
            insert.setObject(1, eventId);
            insert.setShort(2, (short) eventId.version());
            insert.executeUpdate();
        }
    }

    /** The partition of every record of the event. */
    private static List<String> placement(UUID eventId) throws SQLException {
        return strings("SELECT tableoid::regclass::text FROM processed_events WHERE event_id = ?", eventId);
    }

    private static String dayPartition(LocalDate day) {
        return "processed_events_v7_d" + day.toString().replace("-", "");
    }

    private static List<String> partitions() throws SQLException {
        return strings("SELECT relid::text FROM pg_partition_tree('processed_events') WHERE isleaf");
    }

    private static boolean bool(String query, Object... parameters) throws SQLException {
        return "t".equals(strings(query, parameters).get(0));
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

    /** An RFC 9562 version 7 ID made at {@code time}, as a producer that assigns time-ordered IDs makes it. */
    private static UUID uuid7(Instant time) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        long most = (time.toEpochMilli() << 16) | 0x7000L | (random.nextLong() & 0x0FFFL);
        long least = (random.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
        return new UUID(most, least);
    }

    private static String account() {
        return "id-" + UUID.randomUUID().toString().substring(0, 8);
    }
}
