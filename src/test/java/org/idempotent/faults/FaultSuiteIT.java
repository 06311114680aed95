package org.idempotent.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.idempotent.faults.FaultStack.Instance;
import org.idempotent.faults.Invariant.Summary;
import org.idempotent.fixtures.PostgresServer;
import org.idempotent.loadgen.MessageSet;
import org.idempotent.loadgen.Traffic;
import org.idempotent.stack.Database;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * What happens when things go wrong, with real processes: an Artemis broker with a persistent journal, Payara Micro
 * instances with the WAR and the RAR, the machine's PostgreSQL. Every scenario ends with {@link Invariant#check}:
 * nothing lost, nothing applied twice, nothing left on the queue, exactly the poison dead-lettered.
 *
 * <p>Sizes are the issue's; {@code -Dit.scale=0.25} runs a quarter of the messages.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FaultSuiteIT {

    private static final double SCALE = Double.parseDouble(System.getProperty("it.scale", "1"));
    private static final Duration DRAIN = Duration.ofMinutes(10);
    private static final long SEED = Long.getLong("faults.seed", 20261130L);

    private static int scaled(int count) {
        return Math.max(10, (int) Math.round(count * SCALE));
    }

    /**
     * kill -9 of the only consumer JVM at five random moments of a 20,000-message run, restarted each time; 0.5 %
     * poison among them, so that some kills fall between a dead-letter forward and its acknowledgement.
     */
    @Test
    @Order(1)
    void crashLoopLosesNothingAndAppliesNothingTwice() throws Exception {
        MessageSet workload = MessageSet.of(
                MessageSet.runPrefix("crash"), SEED, scaled(20_000), 0.2, 1000, 0.005, MessageSet.Ids.RANDOM);
        try (FaultStack stack = new FaultStack("crash-loop", Map.of())) {
            Instance consumer = stack.startInstance("crash-consumer");
            long started = System.nanoTime();
            Traffic traffic = Traffic.start(stack.settings(), workload.items(), 2);
            Random random = new Random(SEED);
            List<Double> moments = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                moments.add(0.05 + 0.85 * random.nextDouble());
            }
            moments.sort(null);
            for (double moment : moments) {
                awaitApplied(stack, workload, moment);
                consumer.crashAndRestart();
            }
            traffic.await();

            Summary summary = Invariant.check("crash-loop", stack, workload, started, DRAIN);
            assertThat(consumer.starts()).isEqualTo(6);
            // Beyond the built-in copies: each delivery the broker marked as redelivered came back because a JVM
            // died holding it. (The duplicates column is a lower bound here: a killed JVM takes the counts of its
            // last milliseconds with it.)
            assertThat(summary.redelivered())
                    .as("the kills made the broker redeliver what the dead JVMs held")
                    .isPositive();
            assertThat(summary.deadLettered())
                    .as("each poison message dead-lettered once, kills or not")
                    .isEqualTo(workload.poison().size())
                    .isPositive();
        }
    }

    /** Two instances on one queue and one database; 1,000 events x 5 copies, interleaved, from 4 producer threads. */
    @Test
    @Order(2)
    void twoConsumersOnOneQueueApplyEachEventOnce() throws Exception {
        MessageSet workload = MessageSet.copies(MessageSet.runPrefix("two"), SEED, scaled(1_000), 5, 100);
        try (FaultStack stack = new FaultStack("two-consumers", Map.of())) {
            Instance first = stack.startInstance("consumer-a");
            Instance second = stack.startInstance("consumer-b");
            long started = System.nanoTime();
            Traffic.sendAll(stack.settings(), workload.items(), 4);
            awaitApplied(stack, workload, 1);
            long appliedByFirst = first.metrics().outcome("applied");
            long appliedBySecond = second.metrics().outcome("applied");

            Invariant.check("two-consumers", stack, workload, started, DRAIN);
            assertThat(appliedByFirst + appliedBySecond)
                    .isEqualTo(workload.distinct().size());
            assertThat(appliedByFirst).as("both consumers took part").isPositive();
            assertThat(appliedBySecond).as("both consumers took part").isPositive();
        }
    }

    /**
     * PostgreSQL is stopped mid-run and started again; later every connection of the database is terminated. The
     * consumer recovers without a restart; its failures are retried by the broker, none is dead-lettered.
     */
    @Test
    @Order(3)
    void databaseRestartIsRiddenOutWithoutLossOrDeadLetters() throws Exception {
        MessageSet workload = MessageSet.of(
                MessageSet.runPrefix("dbrestart"), SEED, scaled(5_000), 0.2, 200, 0, MessageSet.Ids.RANDOM);
        try (FaultStack stack = new FaultStack("database-restart", Map.of())) {
            Instance consumer = stack.startInstance("db-consumer");
            long started = System.nanoTime();
            Traffic traffic = Traffic.start(stack.settings(), workload.items(), 2);
            awaitApplied(stack, workload, 0.3);
            PostgresServer.stop();
            try {
                await().atMost(Duration.ofMinutes(1))
                        .ignoreExceptions()
                        .until(() -> consumer.metrics().outcome("failed") > 0);
            } finally {
                PostgresServer.start();
            }
            awaitApplied(stack, workload, 0.6);
            int terminated = terminateConnections(stack);
            traffic.await();
            long failed = consumer.metrics().outcome("failed");

            Invariant.check("database-restart", stack, workload, started, DRAIN);
            assertThat(consumer.starts()).as("recovered without a restart").isEqualTo(1);
            assertThat(failed).as("the outage was felt, and retried").isPositive();
            assertThat(terminated).as("connections terminated").isPositive();
        }
    }

    /**
     * The broker is stopped and started mid-run, later killed with kill -9 and started again, on the same persistent
     * journal. The resource adapter reconnects by itself.
     */
    @Test
    @Order(4)
    void brokerRestartLosesNothingAndLeavesNothingInDelivery() throws Exception {
        MessageSet workload = MessageSet.of(
                MessageSet.runPrefix("brokerrestart"), SEED, scaled(5_000), 0.2, 200, 0, MessageSet.Ids.RANDOM);
        try (FaultStack stack = new FaultStack("broker-restart", Map.of())) {
            long started = System.nanoTime();
            Traffic.sendAll(stack.settings(), workload.items(), 2);
            Instance consumer = stack.startInstance("broker-consumer");
            awaitApplied(stack, workload, 0.3);
            stack.stopBroker();
            stack.startBroker();
            awaitApplied(stack, workload, 0.6);
            stack.killBroker();
            stack.startBroker();

            Invariant.check("broker-restart", stack, workload, started, DRAIN);
            assertThat(consumer.starts()).as("reconnected without a restart").isEqualTo(1);
        }
    }

    /** 10,000 events on one account at the product's full concurrency: row-lock contention, no deadlock, exact sum. */
    @Test
    @Order(5)
    void hotAccountAtFullConcurrencyEndsWithTheExactBalance() throws Exception {
        MessageSet workload =
                MessageSet.of(MessageSet.runPrefix("hot"), SEED, scaled(12_500), 0.2, 1, 0, MessageSet.Ids.RANDOM);
        try (FaultStack stack = new FaultStack("hot-account", Map.of("CONSUMER_MAX_SESSIONS", "16"))) {
            Instance consumer = stack.startInstance("hot-consumer");
            long started = System.nanoTime();
            Traffic.sendAll(stack.settings(), workload.items(), 2);
            awaitApplied(stack, workload, 1);
            long failed = consumer.metrics().outcome("failed");

            Invariant.check("hot-account", stack, workload, started, DRAIN);
            assertThat(workload.expectedBalances()).hasSize(1);
            assertThat(failed)
                    .as("no deadlock or serialization failure, not even a retried one")
                    .isZero();
        }
    }

    /**
     * 1 % malformed messages of every kind among valid ones: each dead-lettered once with its reason, no database
     * effect; the valid ones flow on (their rate is printed against a clean run of the same size, same instance).
     */
    @Test
    @Order(6)
    void poisonMixIsDeadLetteredWithReasonsAndTheRestFlows() throws Exception {
        MessageSet clean =
                MessageSet.of(MessageSet.runPrefix("clean"), SEED, scaled(5_000), 0.2, 200, 0, MessageSet.Ids.RANDOM);
        MessageSet mixed = MessageSet.of(
                MessageSet.runPrefix("poison"), SEED + 1, scaled(5_000), 0.2, 200, 0.01, MessageSet.Ids.RANDOM);
        try (FaultStack stack = new FaultStack("poison-mix", Map.of())) {
            Instance consumer = stack.startInstance("poison-consumer");
            double cleanRate = drainRate(stack, clean, 0);
            long rejected = consumer.metrics().outcome("rejected");
            long failed = consumer.metrics().outcome("failed");
            long started = System.nanoTime();
            double mixedRate = drainRate(stack, mixed, clean.distinct().size());
            long rejectedNow = consumer.metrics().outcome("rejected") - rejected;
            long failedNow = consumer.metrics().outcome("failed") - failed;

            Summary summary = Invariant.check("poison-mix", stack, clean.and(mixed), started, DRAIN);
            System.out.printf(
                    "poison-mix: valid messages drained at %.0f/s with 1%% poison, %.0f/s without: %.2f%n",
                    mixedRate, cleanRate, mixedRate / cleanRate);
            assertThat(summary.deadLettered()).isEqualTo(mixed.poison().size()).isPositive();
            assertThat(rejectedNow)
                    .as("each poison message handled once")
                    .isEqualTo(mixed.poison().size());
            assertThat(failedNow)
                    .as("no poison message burns redelivery attempts")
                    .isZero();
        }
    }

    /**
     * PostgreSQL stopped for three times the broker's whole redelivery budget (shortened here to 5 attempts, about
     * 11 s) in the middle of a load. The breaker holds consumption back instead of failing message after message:
     * nothing is dead-lettered, nothing lost, and failed deliveries are bounded by the sessions, not by the messages.
     */
    @Test
    @Order(7)
    void databaseOutageLongerThanTheRedeliveryBudgetDeadLettersNothing() throws Exception {
        int attempts = 5;
        Duration budget = Duration.ofSeconds(1 + 2 + 4 + 4);
        int sessions = 8;
        MessageSet workload =
                MessageSet.of(MessageSet.runPrefix("outage"), SEED, scaled(5_000), 0.2, 200, 0, MessageSet.Ids.RANDOM);
        try (FaultStack stack = new FaultStack(
                "database-outage",
                Map.of("CONSUMER_MAX_SESSIONS", "" + sessions),
                List.of("-Dbroker.max.delivery.attempts=" + attempts, "-Dbroker.max.redelivery.delay=4000"))) {
            Instance consumer = stack.startInstance("outage-consumer");
            long started = System.nanoTime();
            Traffic traffic = Traffic.start(stack.settings(), workload.items(), 2);
            awaitApplied(stack, workload, 0.3);
            long failedBefore = consumer.metrics().outcome("failed");
            PostgresServer.stop();
            long failedDuring;
            try {
                await().atMost(Duration.ofMinutes(1))
                        .ignoreExceptions()
                        .until(() -> consumer.metrics().gauge("payments_database_breaker_open") == 1);
                // Within readiness's cache time (an answer serves every probe for 2 s).
                await("readiness while the breaker is open")
                        .atMost(Duration.ofSeconds(10))
                        .pollInterval(Duration.ofMillis(500))
                        .until(() -> status(consumer.process().uri("/health/ready")) == 503);
                // Held down for three budgets, while deliveries wait instead of failing.
                await().during(budget.multipliedBy(3))
                        .atMost(budget.multipliedBy(3).plusSeconds(30))
                        .until(() -> consumer.metrics().gauge("payments_database_breaker_open") == 1);
                assertThat(status(consumer.process().uri("/health/live")))
                        .as("an outage is not a stuck consumer")
                        .isEqualTo(200);
                failedDuring = consumer.metrics().outcome("failed") - failedBefore;
            } finally {
                PostgresServer.start();
            }
            traffic.await();
            awaitApplied(stack, workload, 1);
            long failed = consumer.metrics().outcome("failed") - failedBefore;

            Summary summary = Invariant.check("database-outage", stack, workload, started, DRAIN);
            System.out.printf(
                    "database-outage: %d failed deliveries (%d during the outage) with %d sessions%n",
                    failed, failedDuring, sessions);
            assertThat(summary.deadLettered()).isZero();
            assertThat(consumer.starts()).as("recovered without a restart").isEqualTo(1);
            assertThat(failed)
                    .as("failed deliveries bounded by the sessions, not by messages x attempts")
                    .isPositive()
                    .isLessThanOrEqualTo(2L * sessions);
        }
    }

    private static int status(URI uri) throws Exception {
        return HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(uri)
                                .timeout(Duration.ofSeconds(20))
                                .build(),
                        HttpResponse.BodyHandlers.discarding())
                .statusCode();
    }

    /** Valid messages per second, from the start of sending until every distinct event is applied. */
    private static double drainRate(FaultStack stack, MessageSet workload, long rowsBefore) {
        long start = System.nanoTime();
        Traffic.sendAll(stack.settings(), workload.items(), 2);
        await().atMost(DRAIN)
                .ignoreExceptions()
                .pollInterval(Duration.ofMillis(200))
                .until(() -> rows(stack) >= rowsBefore + workload.distinct().size());
        return workload.validMessages() / ((System.nanoTime() - start) / 1e9);
    }

    /** Until this fraction of the workload's distinct events is applied (the database is fresh per scenario). */
    private static void awaitApplied(FaultStack stack, MessageSet workload, double fraction) {
        long target = (long) Math.ceil(workload.distinct().size() * fraction);
        await().atMost(DRAIN).ignoreExceptions().until(() -> rows(stack) >= target);
    }

    private static long rows(FaultStack stack) throws Exception {
        try (var db = Database.connect(stack.settings());
                PreparedStatement query = db.prepareStatement("SELECT count(*) FROM processed_events");
                ResultSet row = query.executeQuery()) {
            row.next();
            return row.getLong(1);
        }
    }

    private static int terminateConnections(FaultStack stack) throws Exception {
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
