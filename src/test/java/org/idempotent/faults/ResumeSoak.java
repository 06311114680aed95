package org.idempotent.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.idempotent.faults.FaultStack.Instance;
import org.idempotent.faults.Invariant.Summary;
import org.idempotent.loadgen.MessageSet;
import org.idempotent.stack.Commands;
import org.idempotent.stack.Settings;
import org.junit.jupiter.api.Test;

/**
 * The resume soak, outside the build's tests ({@code mvn verify -Presume-soak}, optionally with
 * {@code -Dsoak.kills=20 -Dsoak.failovers=10 -Dsoak.rate=200}): broker faults one after another under resending
 * producers, each broker started again the way an operator's service manager does (a few seconds after it died), and
 * for each fault the time it took the consumer to resume.
 *
 * <p>"Resumed" is the suites' ({@link Resumption}). Counted per fault too: the slow path (the adapter's activation
 * torn down and set up again instead of its sessions failing over) and connections found dead only by the client's
 * ping (AMQ219011). At the end the fault suite's invariant: every event the producers saw acknowledged applied exactly
 * once, nothing dead-lettered.
 */
class ResumeSoak {

    private static final int KILLS = Integer.getInteger("soak.kills", 20);
    private static final int FAILOVERS = Integer.getInteger("soak.failovers", 10);
    private static final int RATE = Integer.getInteger("soak.rate", 200);
    /** How long a service manager waits before it starts a dead broker again (systemd's RestartSec, say). */
    private static final Duration RESTART_DELAY = Duration.ofSeconds(3);
    /** Load between two faults: the consumer back to its pace before the next one. */
    private static final Duration BETWEEN = Duration.ofSeconds(4);

    private static final Duration P90_BOUND = Duration.ofSeconds(5);
    private static final Duration MAX_BOUND = Duration.ofSeconds(10);
    private static final Duration DRAIN = Duration.ofMinutes(5);
    /**
     * The producers' load per fault, a little more than a fault, its resume and the pause after it took on a 2-core
     * machine: a kill 25 s (the broker's start included), a pair's failover or failback 12 s on average.
     */
    private static final long KILL_SECONDS = 30;

    private static final long FAILOVER_SECONDS = 16;
    /** The load left after the last fault. */
    private static final Duration LAST_LOAD = Duration.ofSeconds(60);

    private static final Path REPORT = Path.of("target", "resume-soak.txt");

    @Test
    void singleBrokerKilledAndRestartedUnderLoad() throws Exception {
        try (FaultStack stack = new FaultStack(fresh("resume-soak-single"), Map.of())) {
            Instance consumer = stack.startInstance("consumer-a");
            int sessions = stack.settings().getInt("CONSUMER_MAX_SESSIONS");
            int port = stack.settings().getInt("BROKER_PORT");
            soak("single broker", stack, List.of(consumer), KILLS, KILL_SECONDS, sessions, number -> {
                Instant killed = Instant.now();
                stack.killBroker();
                pause(RESTART_DELAY);
                return new Made(killed, Resumption.acceptingWhile(port, stack::startBroker));
            });
        }
    }

    @Test
    void brokerPairFailsOverAndBackUnderLoad() throws Exception {
        try (FaultStack stack = FaultStack.highlyAvailable(fresh("resume-soak-pair"), Map.of(), null)) {
            Instance consumer = stack.startInstance("consumer-a");
            String queue = stack.settings().get("PAYMENTS_QUEUE");
            int sessions = stack.settings().getInt("CONSUMER_MAX_SESSIONS");
            BrokerPair pair = stack.brokerPair();
            // Each failover counts twice: the backup taking over from a killed primary, and the primary, restarted
            // later by its service manager, taking the store back (failback).
            soak("broker pair", stack, List.of(consumer), 2 * FAILOVERS, FAILOVER_SECONDS, sessions, n -> {
                if (n % 2 == 0) {
                    Instant killed = Instant.now();
                    pair.primary().kill();
                    return new Made(
                            killed, Resumption.acceptingWhile(pair.backup().port(), () -> {}));
                }
                pause(RESTART_DELAY);
                Instant restarted = Instant.now();
                return new Made(
                        restarted, Resumption.acceptingWhile(pair.primary().port(), () -> pair.failBack(queue)));
            });
        }
    }

    /**
     * The scenario's directory emptied: a broker journal left by an earlier soak holds its messages, which this one's
     * consumer and announcement check would meet (the build's tests start from an empty stack directory).
     */
    private static String fresh(String scenario) throws IOException {
        Commands.deleteRecursively(
                Settings.fromEnvironment().stackDir().resolve("faults").resolve(scenario));
        return scenario;
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
            long secondsPerFault,
            int sessions,
            FaultMaker maker)
            throws Exception {
        // The producers send for about as long as the faults take; the last minute of the load is left for the last
        // resume, which needs commits after it.
        long seconds = faults * secondsPerFault + LAST_LOAD.toSeconds();
        MessageSet workload =
                MessageSet.of(MessageSet.runPrefix("soak"), 20261206L + faults, (int) (seconds * RATE), 0.2, 200);
        double lastFault = 1 - (double) LAST_LOAD.toSeconds() / seconds;
        long started = System.nanoTime();
        ResendingProducers producers = ResendingProducers.start(stack.settings(), workload, 4, RATE);
        List<Resumption> measured = new ArrayList<>();
        pause(BETWEEN);
        for (int n = 0; n < faults && !producers.reached(lastFault); n++) {
            Made made = maker.make(n);
            Resumption resumed = Resumption.measure(
                    topology + " #" + (n + 1), stack, consumers, sessions, made.at(), made.accepting());
            measured.add(resumed);
            System.out.println(resumed.describe());
            pause(BETWEEN);
        }
        ResendingProducers.Ledger ledger = producers.await();
        System.out.printf("%s: producers %s%n", topology, ledger.describe());
        Summary summary =
                Invariant.checkRunning("resume soak, " + topology, stack, workload, workload, ledger, started, DRAIN);
        String verdict = report(topology, measured, summary);
        System.out.println(verdict);

        assertThat(measured.size())
                .as(
                        "faults made before the load ran out (they took longer than KILL_SECONDS or FAILOVER_SECONDS plans)")
                .isEqualTo(faults);
        assertThat(summary.deadLettered()).as("dead-lettered").isZero();
        long[] resumed = resumed(measured);
        assertThat(percentile(resumed, 90)).as(verdict).isLessThanOrEqualTo(P90_BOUND.toMillis());
        assertThat(resumed[resumed.length - 1]).as(verdict).isLessThanOrEqualTo(MAX_BOUND.toMillis());
    }

    private static long[] resumed(List<Resumption> faults) {
        return faults.stream().mapToLong(Resumption::millis).sorted().toArray();
    }

    private static long percentile(long[] sorted, int percent) {
        return sorted[Math.max(0, (int) Math.ceil(sorted.length * percent / 100.0) - 1)];
    }

    private static String report(String topology, List<Resumption> faults, Summary summary) throws IOException {
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
                faults.stream().filter(fault -> fault.pingFailures() > 0).count(),
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
