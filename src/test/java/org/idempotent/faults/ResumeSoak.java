package org.idempotent.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import org.idempotent.faults.FaultStack.Instance;
import org.idempotent.faults.Invariant.Summary;
import org.idempotent.loadgen.MessageSet;
import org.idempotent.stack.Database;
import org.idempotent.stack.Settings;
import org.junit.jupiter.api.Test;

/**
 * The resume soak, outside the build's tests ({@code mvn verify -Presume-soak}, optionally with
 * {@code -Dsoak.kills=20 -Dsoak.failovers=10 -Dsoak.rate=200}): broker faults one after another under resending
 * producers, each broker started again the way an operator's service manager does (a few seconds after it died), and
 * for each fault the time it took the consumer to resume.
 *
 * <p>"Resumed" is the same for every fault: from the broker that takes over (the restarted one, or the backup)
 * accepting connections, to every session of the consumer attached to it again and the first commit after that. A
 * fault whose consumer is not back within {@link #SLOW} gets a thread dump in the consumer's log. The slow path is
 * counted per fault too: the adapter's activation torn down and set up again (AMQ152003/AMQ152005) instead of its
 * sessions failing over, and connections found dead only by the client's ping (AMQ219011). At the end the fault
 * suite's invariant: every event the producers saw acknowledged applied exactly once, nothing dead-lettered.
 */
class ResumeSoak {

    private static final int KILLS = Integer.getInteger("soak.kills", 20);
    private static final int FAILOVERS = Integer.getInteger("soak.failovers", 10);
    private static final int RATE = Integer.getInteger("soak.rate", 200);
    /** How long a service manager waits before it starts a dead broker again (systemd's RestartSec, say). */
    private static final Duration RESTART_DELAY = Duration.ofSeconds(3);
    /** Load between two faults: the consumer back to its pace before the next one. */
    private static final Duration BETWEEN = Duration.ofSeconds(4);

    private static final Duration SLOW = Duration.ofSeconds(5);
    private static final Duration P90_BOUND = Duration.ofSeconds(5);
    private static final Duration MAX_BOUND = Duration.ofSeconds(10);
    private static final Duration DRAIN = Duration.ofMinutes(5);
    private static final Path REPORT = Path.of("target", "resume-soak.txt");
    private static final List<String> SLOW_PATH = List.of("AMQ152003", "AMQ152005");
    private static final String PING_FAILURE = "AMQ219011";

    /** One fault: when it was made, when the broker taking over accepted connections, and when the consumer was back. */
    private record Fault(
            String what,
            Instant made,
            Instant accepting,
            Instant attached,
            Instant committed,
            long resets,
            long pings) {

        long resumedMillis() {
            Instant back = committed.isAfter(attached) ? committed : attached;
            return Duration.between(accepting, back).toMillis();
        }

        String describe() {
            return String.format(
                    "%-22s accepting %5d ms after the fault; attached +%5d ms, first commit +%5d ms: resumed %5d ms;"
                            + " activation resets %d, ping failures %d",
                    what,
                    Duration.between(made, accepting).toMillis(),
                    Duration.between(accepting, attached).toMillis(),
                    Duration.between(accepting, committed).toMillis(),
                    resumedMillis(),
                    resets,
                    pings);
        }
    }

    @Test
    void singleBrokerKilledAndRestartedUnderLoad() throws Exception {
        try (FaultStack stack = new FaultStack("resume-soak-single", Map.of())) {
            Instance consumer = stack.startInstance("consumer-a");
            String queue = stack.settings().get("PAYMENTS_QUEUE");
            int sessions = stack.settings().getInt("CONSUMER_MAX_SESSIONS");
            int port = stack.settings().getInt("BROKER_PORT");
            soak("single broker", stack, List.of(consumer), KILLS, () -> attached(stack, queue), sessions, number -> {
                Instant killed = Instant.now();
                stack.killBroker();
                pause(RESTART_DELAY);
                return new Made(killed, acceptingWhile(port, stack::startBroker));
            });
        }
    }

    @Test
    void brokerPairFailsOverAndBackUnderLoad() throws Exception {
        try (FaultStack stack = FaultStack.highlyAvailable("resume-soak-pair", Map.of(), null)) {
            Instance consumer = stack.startInstance("consumer-a");
            String queue = stack.settings().get("PAYMENTS_QUEUE");
            int sessions = stack.settings().getInt("CONSUMER_MAX_SESSIONS");
            BrokerPair pair = stack.brokerPair();
            // Each failover counts twice: the backup taking over from a killed primary, and the primary, restarted
            // later by its service manager, taking the store back (failback).
            soak(
                    "broker pair",
                    stack,
                    List.of(consumer),
                    2 * FAILOVERS,
                    () -> pair.consumerCount(queue),
                    sessions,
                    n -> {
                        if (n % 2 == 0) {
                            Instant killed = Instant.now();
                            pair.primary().kill();
                            return new Made(killed, acceptingWhile(pair.backup().port(), () -> {}));
                        }
                        pause(RESTART_DELAY);
                        Instant restarted = Instant.now();
                        return new Made(restarted, acceptingWhile(pair.primary().port(), () -> pair.failBack(queue)));
                    });
        }
    }

    /** A fault made, and the moment the broker taking over accepted connections. */
    private record Made(Instant at, Instant accepting) {}

    @FunctionalInterface
    private interface FaultMaker {
        Made make(int number) throws Exception;
    }

    private void soak(
            String topology,
            FaultStack stack,
            List<Instance> consumers,
            int faults,
            LongSupplier attachedSessions,
            int sessions,
            FaultMaker maker)
            throws Exception {
        // Enough to keep the producers sending until the last fault is measured: a resume takes a second or two.
        long seconds = faults * (RESTART_DELAY.getSeconds() + BETWEEN.getSeconds() + 4) + 10;
        MessageSet workload =
                MessageSet.of(MessageSet.runPrefix("soak"), 20261206L + faults, (int) (seconds * RATE), 0.2, 200);
        long started = System.nanoTime();
        ResendingProducers producers = ResendingProducers.start(stack.settings(), workload, 4, RATE);
        List<Fault> measured = new ArrayList<>();
        pause(BETWEEN);
        for (int n = 0; n < faults && !producers.reached(1); n++) {
            Made made = maker.make(n);
            Instant attached = awaitAttached(consumers, attachedSessions, sessions, made.accepting());
            Instant committed = firstCommitAfter(stack.settings(), made.accepting());
            Fault fault = new Fault(
                    topology + " #" + (n + 1),
                    made.at(),
                    made.accepting(),
                    attached,
                    committed,
                    count(consumers, made.at(), SLOW_PATH),
                    count(consumers, made.at(), List.of(PING_FAILURE)));
            measured.add(fault);
            System.out.println(fault.describe());
            pause(BETWEEN);
        }
        ResendingProducers.Ledger ledger = producers.await();
        System.out.printf("%s: producers %s%n", topology, ledger.describe());
        Summary summary =
                Invariant.checkRunning("resume soak, " + topology, stack, workload, workload, ledger, started, DRAIN);
        String verdict = report(topology, measured, summary);
        System.out.println(verdict);

        assertThat(measured).as("faults made").hasSize(faults);
        assertThat(summary.deadLettered()).as("dead-lettered").isZero();
        long[] resumed = resumed(measured);
        assertThat(percentile(resumed, 90)).as(verdict).isLessThanOrEqualTo(P90_BOUND.toMillis());
        assertThat(resumed[resumed.length - 1]).as(verdict).isLessThanOrEqualTo(MAX_BOUND.toMillis());
    }

    /** When every session is attached again; a thread dump of each consumer once it takes longer than {@link #SLOW}. */
    private static Instant awaitAttached(
            List<Instance> consumers, LongSupplier attachedSessions, int sessions, Instant since) {
        boolean dumped = false;
        Instant deadline = since.plus(Duration.ofMinutes(2));
        while (Instant.now().isBefore(deadline)) {
            try {
                if (attachedSessions.getAsLong() >= sessions) {
                    return Instant.now();
                }
            } catch (RuntimeException notYet) {
                // The broker's management is not up yet.
            }
            if (!dumped && Instant.now().isAfter(since.plus(SLOW))) {
                consumers.forEach(consumer -> consumer.process().threadDump());
                dumped = true;
            }
            pause(Duration.ofMillis(50));
        }
        throw new AssertionError("sessions not attached 2 minutes after the broker accepted connections");
    }

    private static long attached(FaultStack stack, String queue) {
        try {
            return stack.broker().consumerCount(queue);
        } catch (IOException | javax.management.JMException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The first commit at or after {@code since}, by the database's clock (the same host's). */
    private static Instant firstCommitAfter(Settings settings, Instant since) throws SQLException {
        return await().atMost(Duration.ofMinutes(2))
                .pollInterval(Duration.ofMillis(50))
                .ignoreExceptions()
                .until(() -> firstCommit(settings, since), at -> at != null);
    }

    private static Instant firstCommit(Settings settings, Instant since) throws SQLException {
        try (Connection db = Database.connect(settings);
                PreparedStatement query =
                        db.prepareStatement("SELECT min(processed_at) FROM processed_events WHERE processed_at >= ?")) {
            query.setTimestamp(1, Timestamp.from(since));
            try (ResultSet row = query.executeQuery()) {
                row.next();
                Timestamp at = row.getTimestamp(1);
                return at == null ? null : at.toInstant();
            }
        }
    }

    /** Runs {@code start} and meanwhile tries the port every 20 ms: the moment it first accepted a connection. */
    private static Instant acceptingWhile(int port, Runnable start) {
        CompletableFuture<Void> starting = CompletableFuture.runAsync(start);
        Instant accepting = await().atMost(Duration.ofMinutes(2))
                .pollInterval(Duration.ofMillis(20))
                .pollDelay(Duration.ZERO)
                .ignoreExceptions()
                .until(() -> accepts(port), at -> at != null);
        starting.join();
        return accepting;
    }

    private static Instant accepts(int port) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
            return Instant.now();
        }
    }

    private static long count(List<Instance> consumers, Instant since, List<String> codes) {
        return consumers.stream()
                .mapToLong(consumer -> AdapterLog.count(consumer, since, codes))
                .sum();
    }

    private static long[] resumed(List<Fault> faults) {
        return faults.stream().mapToLong(Fault::resumedMillis).sorted().toArray();
    }

    private static long percentile(long[] sorted, int percent) {
        return sorted[Math.max(0, (int) Math.ceil(sorted.length * percent / 100.0) - 1)];
    }

    private static String report(String topology, List<Fault> faults, Summary summary) throws IOException {
        long[] resumed = resumed(faults);
        String verdict = String.format(
                "%s: %d faults, resumed p50 %d ms, p90 %d ms, max %d ms after the broker accepted connections;"
                        + " faults with an activation reset %d, with a ping failure %d; lost %d, twice %d,"
                        + " dead-lettered %d",
                topology,
                faults.size(),
                percentile(resumed, 50),
                percentile(resumed, 90),
                resumed[resumed.length - 1],
                faults.stream().filter(fault -> fault.resets() > 0).count(),
                faults.stream().filter(fault -> fault.pings() > 0).count(),
                summary.lost(),
                summary.twice(),
                summary.deadLettered());
        List<String> lines = new ArrayList<>();
        faults.forEach(fault -> lines.add(fault.describe()));
        lines.add(verdict);
        Files.write(REPORT, lines, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        return verdict;
    }

    private static void pause(Duration pause) {
        try {
            Thread.sleep(pause.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
