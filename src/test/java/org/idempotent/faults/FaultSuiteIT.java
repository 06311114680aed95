package org.idempotent.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.idempotent.faults.FaultStack.Instance;
import org.idempotent.faults.Invariant.Summary;
import org.idempotent.fixtures.PostgresServer;
import org.idempotent.fixtures.SideBySide;
import org.idempotent.loadgen.MessageSet;
import org.idempotent.loadgen.Traffic;
import org.idempotent.stack.Database;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * What happens when things go wrong, with real processes, on one stack for every scenario: an Artemis broker with a
 * persistent journal, a Payara Micro instance with the WAR and the RAR at 16 sessions (a second joins for the last
 * scenario), the test run's PostgreSQL. Each scenario sends its own accounts and ends with
 * {@link Invariant#checkRunning}: over everything sent so far, nothing lost, nothing applied twice, nothing left on
 * the queue, exactly the scenario's poison dead-lettered, every applied event announced once.
 *
 * <p>The broker's redelivery delay is capped at 1 s (the product's cap is 5 minutes): a message that comes back after a
 * kill or a restart is redelivered within a second rather than after a back-off of up to a minute that would prove
 * nothing more. The scenarios before the outage keep the product's 20 attempts: a kill -9 counts one attempt against
 * every message the dead JVM held, and a slow restart adds failed ones. For the outage scenario the broker restarts
 * with 5 attempts (1 s apart, 4 s in all), which the outage outlasts three times in 12 s.
 *
 * <p>Sizes are what each guarantee needs, not volume for its own sake: the consumer holds at most 16 sessions x about
 * 40 prefetched messages (16 KiB windows), about 640 in flight, so a few thousand messages keep every fault landing on
 * full windows with a backlog behind them. {@code -Dit.scale=5} runs five times as many.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Order(SideBySide.LAST)
@ResourceLock(SideBySide.FAULT_TIMING)
class FaultSuiteIT {

    private static final double SCALE = Double.parseDouble(System.getProperty("it.scale", "1"));
    private static final Duration DRAIN = Duration.ofMinutes(5);
    private static final long SEED = Long.getLong("faults.seed", 20261130L);
    private static final int SESSIONS = 16;
    private static final int ATTEMPTS = 5;
    /** Refunds of this share of each scenario's payments. */
    private static final double REFUNDS = 0.1;

    private static final String REDELIVERY_DELAY_CAP = "-Dbroker.max.redelivery.delay=1000";
    private static final Duration BUDGET = Duration.ofSeconds(1 + 1 + 1 + 1);

    private FaultStack stack;
    private Instance consumer;
    private MessageSet all;
    /** The second instance, from the readiness scenario on. */
    private Instance second;

    private static int scaled(int count) {
        return Math.max(10, (int) Math.round(count * SCALE));
    }

    @BeforeAll
    void startStack() {
        // processed_events partitioned by event ID (DEDUP_PARTITIONING=id): the scenarios' time-ordered v7 IDs go to
        // their day's partition, the hot account's random v4 IDs to the table of other versions (the failover suite
        // keeps the unpartitioned table under its faults).
        stack = new FaultStack(
                "faults",
                Map.of(
                        "DEDUP_PARTITIONING",
                        "id",
                        "CONSUMER_MAX_SESSIONS",
                        String.valueOf(SESSIONS),
                        // The broker's cap below, which a deferred refund's back-off follows too.
                        "BROKER_MAX_REDELIVERY_DELAY_SECONDS",
                        "1"),
                List.of(REDELIVERY_DELAY_CAP));
        consumer = stack.startInstance("consumer-a");
    }

    @AfterAll
    void stopStack() {
        if (stack != null) {
            stack.close();
        }
    }

    /**
     * kill -9 of the only consumer JVM at three random moments of a 4,000-message run, restarted each time; 0.5 %
     * poison among them, so that a kill may fall between a dead-letter forward and its acknowledgement (the exact
     * windows are CrashBetweenCommitAndAckIT's). Three kills: each lands on full windows; more only repeat it.
     */
    @Test
    @Order(1)
    void crashLoopLosesNothingAndAppliesNothingTwice() throws Exception {
        MessageSet workload = next("crash", scaled(4_000), 0.005);
        int startsBefore = consumer.starts();
        long redeliveredBefore = consumer.redeliveries();
        long started = System.nanoTime();
        Traffic traffic = Traffic.start(stack.settings(), workload.items(), 2);
        track(workload);
        Random random = new Random(SEED);
        List<Double> moments = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            moments.add(0.05 + 0.85 * random.nextDouble());
        }
        moments.sort(null);
        for (double moment : moments) {
            awaitApplied(workload, moment);
            consumer.crashAndRestart();
        }
        traffic.await();

        Summary summary = check("crash-loop", workload, started);
        assertThat(consumer.starts() - startsBefore).isEqualTo(3);
        // Beyond the built-in copies: each delivery the broker marked as redelivered came back because a JVM died
        // holding it.
        assertThat(consumer.redeliveries() - redeliveredBefore)
                .as("the kills made the broker redeliver what the dead JVMs held")
                .isPositive();
        assertThat(summary.deadLettered())
                .as("each poison message dead-lettered once, kills or not")
                .isEqualTo(workload.poison().size())
                .isPositive();
    }

    /**
     * 2,500 events on one account at 16 sessions: every delivery contends for one row lock, no deadlock, exact sum.
     */
    @Test
    @Order(2)
    void hotAccountAtFullConcurrencyEndsWithTheExactBalance() throws Exception {
        MessageSet workload =
                MessageSet.of(MessageSet.runPrefix("hot"), SEED + 2, scaled(2_500), 0.2, 1, 0, MessageSet.Ids.RANDOM);
        long failedBefore = consumer.metrics().outcome("failed");
        long started = System.nanoTime();
        send(workload);
        awaitApplied(workload, 1);
        long failed = consumer.metrics().outcome("failed") - failedBefore;

        check("hot-account", workload, started);
        assertThat(workload.expectedBalances()).hasSize(1);
        assertThat(failed)
                .as("no deadlock or serialization failure, not even a retried one")
                .isZero();
    }

    /**
     * 1 % malformed messages of every kind among valid ones: each dead-lettered once with its reason, no database
     * effect; the valid ones flow on, every one applied, no poison message failed and redelivered in their way. 2,000
     * each: 20 poison messages, every kind at least once.
     *
     * <p>Their rate beside a clean run of the same size on the same instance is printed (measured 1.05 and 1.41), not
     * asserted: each drain lasts about two seconds, which a refund that overtook its payment lengthens by back-offs of
     * up to a second each, the 200 ms polls by up to a fifth of one, and another process on a shared machine by
     * anything, so the ratio of two of them falls under any bound by chance.
     */
    @Test
    @Order(3)
    void poisonMixIsDeadLetteredWithReasonsAndTheRestFlows() throws Exception {
        MessageSet clean = next("clean", scaled(2_000), 0);
        MessageSet mixed = next("poison", scaled(2_000), 0.01);
        double cleanRate = drainRate(clean);
        long rejected = consumer.metrics().outcome("rejected");
        long failed = consumer.metrics().outcome("failed");
        long started = System.nanoTime();
        double mixedRate = drainRate(mixed);
        long rejectedNow = consumer.metrics().outcome("rejected") - rejected;
        long failedNow = consumer.metrics().outcome("failed") - failed;

        Summary summary = check("poison-mix", clean.and(mixed), started);
        System.out.printf(
                "poison-mix: valid messages drained at %.0f/s with 1%% poison, %.0f/s without: %.2f%n",
                mixedRate, cleanRate, mixedRate / cleanRate);
        assertThat(summary.deadLettered()).isEqualTo(mixed.poison().size()).isPositive();
        assertThat(rejectedNow)
                .as("each poison message handled once")
                .isEqualTo(mixed.poison().size());
        assertThat(failedNow).as("no poison message burns redelivery attempts").isZero();
    }

    /**
     * The broker is stopped and started while producers send, later killed with kill -9 and started again, on the same
     * persistent journal. The producers reconnect and send again what they do not know to be stored (same event IDs,
     * same bodies), so copies of one event may reach the journal twice; the resource adapter's sessions fail over by
     * themselves, resumed ({@link Resumption}) within {@link FailoverSuiteIT#RESUME_BOUND} of each start, no
     * activation set up again. Every event a
     * producer saw acknowledged is applied once, balances match the producers' ledger.
     */
    @Test
    @Order(4)
    void brokerRestartWhileProducersSendLosesNothingAndAppliesNothingTwice() throws Exception {
        MessageSet workload = next("brokerrestart", scaled(3_000), 0.005);
        int startsBefore = consumer.starts();
        long started = System.nanoTime();
        // Paced below the consumer's rate, so that both faults land while the producers are still sending.
        ResendingProducers producers = ResendingProducers.start(stack.settings(), workload, 4, 400);
        track(workload);
        await().atMost(DRAIN).until(() -> producers.reached(0.3));
        Instant stopped = Instant.now();
        stack.stopBroker();
        Resumption afterTheRestart =
                resumed("broker stop and start", stopped, Resumption.acceptingWhile(port(), stack::startBroker));
        await().atMost(DRAIN).until(() -> producers.reached(0.6));
        Instant killed = Instant.now();
        stack.killBroker();
        Resumption afterTheKill =
                resumed("broker kill -9 and start", killed, Resumption.acceptingWhile(port(), stack::startBroker));
        assertThat(producers.reached(1)).as("the producers were still sending").isFalse();
        ResendingProducers.Ledger ledger = producers.await();

        System.out.printf("broker-restart: producers %s%n", ledger.describe());
        Summary summary = Invariant.checkRunning("broker-restart", stack, all, workload, ledger, started, DRAIN);
        assertThat(ledger.failedCommits() + ledger.failedSends())
                .as("the producers met the faults")
                .isPositive();
        assertThat(summary.deadLettered()).isEqualTo(workload.poison().size());
        assertThat(consumer.starts() - startsBefore)
                .as("reconnected without a restart")
                .isZero();
        afterTheRestart.assertWithin(FailoverSuiteIT.RESUME_BOUND);
        afterTheKill.assertWithin(FailoverSuiteIT.RESUME_BOUND);
    }

    private int port() {
        return stack.settings().getInt("BROKER_PORT");
    }

    /** From the broker accepting connections until every session of the consumer is on the queue and a commit. */
    private Resumption resumed(String what, Instant fault, Instant accepting) throws SQLException {
        return Resumption.measure(what, stack, List.of(consumer), SESSIONS, fault, accepting);
    }

    /**
     * PostgreSQL stopped for three times the broker's whole redelivery budget in the middle of a load, started again,
     * and later every connection of the database terminated. The breaker holds consumption back instead of failing
     * message after message: nothing is dead-lettered, nothing lost, failed deliveries are bounded by the sessions,
     * not by the messages; the consumer recovers without a restart.
     */
    @Test
    @Order(5)
    void databaseOutageLongerThanTheRedeliveryBudgetDeadLettersNothing() throws Exception {
        stack.restartBroker(List.of("-Dbroker.max.delivery.attempts=" + ATTEMPTS, REDELIVERY_DELAY_CAP));
        // Refunds among them: one waiting for its payment is a scheduled copy, which spends none of this budget.
        MessageSet workload = next("outage", scaled(3_000), 0);
        int startsBefore = consumer.starts();
        long started = System.nanoTime();
        Traffic traffic = Traffic.start(stack.settings(), workload.items(), 2);
        track(workload);
        awaitApplied(workload, 0.3);
        long failedBefore = consumer.metrics().outcome("failed");
        PostgresServer.stop();
        long failedDuring;
        try {
            await().atMost(Duration.ofMinutes(1))
                    .ignoreExceptions()
                    .until(() -> consumer.metrics().gauge("payments_database_breaker_open") == 1);
            // Within readiness's cache time (an answer serves every probe for 2 s); the answer names what is down.
            await("readiness while the breaker is open")
                    .atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(500))
                    .until(() -> {
                        HttpResponse<String> ready = health(consumer.process().uri("/health/ready"));
                        return ready.statusCode() == 503 && ready.body().contains("\"database\":\"DOWN");
                    });
            // Held down for three budgets, while deliveries wait instead of failing.
            await().during(BUDGET.multipliedBy(3))
                    .atMost(BUDGET.multipliedBy(3).plusSeconds(30))
                    .until(() -> consumer.metrics().gauge("payments_database_breaker_open") == 1);
            assertThat(health(consumer.process().uri("/health/live")).statusCode())
                    .as("an outage is not a stuck consumer: a restart would not cure it")
                    .isEqualTo(200);
            failedDuring = consumer.metrics().outcome("failed") - failedBefore;
        } finally {
            PostgresServer.start();
        }
        awaitApplied(workload, 0.6);
        await("readiness once the database answers")
                .atMost(Duration.ofSeconds(30))
                .until(() -> health(consumer.process().uri("/health/ready")).statusCode() == 200);
        long failedThroughOutage = consumer.metrics().outcome("failed") - failedBefore;
        // Connections the pool believes alive, ended under it: each fails one delivery, which the broker retries.
        int terminated = terminateConnections();
        traffic.await();

        Summary summary = check("database-outage", workload, started);
        System.out.printf(
                "database-outage: %d failed deliveries (%d during the outage) with %d sessions%n",
                failedThroughOutage, failedDuring, SESSIONS);
        assertThat(summary.deadLettered()).isZero();
        assertThat(consumer.starts() - startsBefore)
                .as("recovered without a restart")
                .isZero();
        assertThat(failedThroughOutage)
                .as("failed deliveries bounded by the sessions, not by messages x attempts")
                .isPositive()
                .isLessThanOrEqualTo(2L * SESSIONS);
        assertThat(terminated).as("connections terminated").isPositive();
    }

    /**
     * Readiness speaks for the MDBs' sessions, not only for the broker: a second instance started while the refunds
     * queue admits one consumer fewer than both instances' sessions answers DOWN and names the queue, though the
     * broker and the database answer; once the queue admits them all, it is ready, with every session attached.
     */
    @Test
    @Order(6)
    void readinessIsDownUntilEverySessionOfTheConsumersIsAttached() throws Exception {
        String refunds = stack.settings().get("REFUNDS_QUEUE");
        int sessions = stack.settings().getInt("REFUNDS_MAX_SESSIONS");
        stack.broker().limitConsumers(refunds, 2 * sessions - 1);
        try {
            second = stack.startInstanceUnready("consumer-b");
            await().atMost(Duration.ofMinutes(3))
                    .pollInterval(Duration.ofMillis(500))
                    .ignoreExceptions()
                    .untilAsserted(() -> {
                        HttpResponse<String> ready = health(second.process().uri("/health/ready"));
                        assertThat(ready.statusCode()).isEqualTo(503);
                        assertThat(ready.body())
                                .contains("\"broker\":\"UP\"", "\"database\":\"UP\"")
                                .containsPattern("\"consumerSessions\":\"DOWN: [^\"]*" + refunds + " \\d/" + sessions);
                    });
            assertThat(stack.broker().consumerCount(refunds)).isLessThan(2 * sessions);
        } finally {
            stack.broker().limitConsumers(refunds, -1);
        }
        second.awaitReady();
        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(
                        () -> assertThat(stack.broker().consumerCount(refunds)).isEqualTo(2 * sessions));
    }

    /**
     * A second instance joins the first on the same queue and database; 400 events x 5 copies, interleaved, from 4
     * producer threads, held on the queue until both instances' 32 sessions are connected, then released at once:
     * the copies of one event reach both instances together.
     */
    @Test
    @Order(7)
    void twoConsumersOnOneQueueApplyEachEventOnce() throws Exception {
        MessageSet workload = MessageSet.copies(MessageSet.runPrefix("two"), SEED + 6, scaled(400), 5, 100);
        long appliedBefore = consumer.metrics().outcome("applied");
        long duplicatesBefore = consumer.metrics().outcome("duplicate");
        String queue = stack.settings().get("PAYMENTS_QUEUE");
        stack.broker().pause(queue);
        long started = System.nanoTime();
        Traffic.sendAll(stack.settings(), workload.items(), 4);
        track(workload);
        // Ready is not yet consuming: the second instance's endpoint connects its sessions just after.
        await().atMost(Duration.ofMinutes(1)).until(() -> stack.broker().consumerCount(queue) == 2 * SESSIONS);
        stack.broker().resume(queue);
        awaitApplied(workload, 1);

        // Once the queue is empty: every copy handled.
        check("two-consumers", workload, started);
        long appliedByFirst = consumer.metrics().outcome("applied") - appliedBefore;
        long appliedBySecond = second.metrics().outcome("applied");
        long duplicatesOfFirst = consumer.metrics().outcome("duplicate") - duplicatesBefore;
        long duplicatesOfSecond = second.metrics().outcome("duplicate");
        assertThat(appliedByFirst + appliedBySecond)
                .as("each event applied once, across both")
                .isEqualTo(workload.distinct().size());
        // Which instance applies an event is a race the warm one mostly wins; each absorbing copies as duplicates is
        // what the race forced: copies whose original the other instance applied, or was applying at that moment.
        assertThat(duplicatesOfFirst)
                .as("duplicates absorbed by the first instance")
                .isPositive();
        assertThat(duplicatesOfSecond)
                .as("duplicates absorbed by the second instance")
                .isPositive();
        assertThat(appliedByFirst + appliedBySecond + duplicatesOfFirst + duplicatesOfSecond)
                .as("every copy handled once, by one of them")
                .isEqualTo(workload.validMessages());
    }

    /** A scenario's workload: 20 % copies, refunds of 10 % of the payments (with their copies), the poison asked for. */
    private MessageSet next(String name, int messages, double poison) {
        return MessageSet.of(
                MessageSet.runPrefix(name),
                SEED + name.hashCode(),
                messages,
                0.2,
                200,
                poison,
                MessageSet.Ids.TIME_ORDERED,
                REFUNDS);
    }

    private void send(MessageSet workload) {
        Traffic.sendAll(stack.settings(), workload.items(), 2);
        track(workload);
    }

    /** What the invariant holds the stack to from now on: everything sent to it. */
    private void track(MessageSet workload) {
        all = all == null ? workload : all.and(workload);
    }

    private Summary check(String scenario, MessageSet latest, long started) throws Exception {
        return Invariant.checkRunning(scenario, stack, all, latest, started, DRAIN);
    }

    private static HttpResponse<String> health(URI uri) throws Exception {
        return HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(uri)
                                .timeout(Duration.ofSeconds(20))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
    }

    /** Valid messages per second, from the start of sending until every distinct event is applied. */
    private double drainRate(MessageSet workload) {
        long start = System.nanoTime();
        send(workload);
        awaitApplied(workload, 1);
        return workload.validMessages() / ((System.nanoTime() - start) / 1e9);
    }

    /** Until this fraction of the workload's distinct events is applied. */
    private void awaitApplied(MessageSet workload, double fraction) {
        long target = (long) Math.ceil(workload.distinct().size() * fraction);
        await().atMost(DRAIN)
                .ignoreExceptions()
                .pollInterval(Duration.ofMillis(200))
                .until(() -> Invariant.applied(stack.settings(), workload) >= target);
    }

    private int terminateConnections() throws Exception {
        try (var db = Database.connect(stack.settings());
                PreparedStatement terminate =
                        db.prepareStatement("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                + "WHERE datname = current_database() AND pid <> pg_backend_pid()");
                ResultSet row = terminate.executeQuery()) {
            row.next();
            return row.getInt(1);
        }
    }
}
