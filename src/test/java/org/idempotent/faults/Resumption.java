package org.idempotent.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import javax.management.JMException;
import org.idempotent.faults.FaultStack.Instance;
import org.idempotent.stack.Database;
import org.idempotent.stack.Settings;

/**
 * "Resumed", the same for every broker fault of the suites and the soak: from the broker that takes over (the
 * restarted one, or the backup) accepting connections, to every session of the consumers attached to it again and
 * the first commit after that. The fast path is asserted too: the adapter's client fails its sessions over; an
 * activation torn down and set up again (AMQ152003, AMQ152005) is the slow path, which waits setupInterval and then
 * re-creates every session one by one.
 *
 * <p>Measured from outside, as an operator sees it: the broker's count of the queue's consumers, asked every 50 ms,
 * and the database's commits. A consumer not back within {@link #SLOW} gets a thread dump in its log, and a failed
 * assertion prints the whole timeline: the fault, the broker accepting, every change of the count, the adapter's lines.
 */
record Resumption(
        String what,
        Instant fault,
        Instant accepting,
        Instant attached,
        Instant committed,
        long resets,
        long pingFailures,
        List<String> counts,
        String adapterLines) {

    /** When a consumer not yet back gets a thread dump: the resume soak's p90 bound. */
    static final Duration SLOW = Duration.ofSeconds(5);

    private static final List<String> SLOW_PATH = List.of("AMQ152003", "AMQ152005");
    private static final String PING_FAILURE = "AMQ219011";
    private static final Duration GIVE_UP = Duration.ofMinutes(2);

    /** Runs {@code start} and meanwhile tries the port every 20 ms: the moment it first accepted a connection. */
    static Instant acceptingWhile(int port, Runnable start) {
        CompletableFuture<Void> starting = CompletableFuture.runAsync(start);
        Instant accepting = await().atMost(GIVE_UP)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(20))
                .ignoreExceptions()
                .until(() -> accepts(port), at -> at != null);
        starting.join();
        return accepting;
    }

    /**
     * Waits until {@code attachedSessions} (the live broker's count) reaches {@code sessions} and a commit follows,
     * recording the way there.
     */
    static Resumption measure(
            String what, FaultStack stack, List<Instance> consumers, int sessions, Instant fault, Instant accepting)
            throws SQLException {
        String queue = stack.settings().get("PAYMENTS_QUEUE");
        LongSupplier attachedSessions = () -> {
            try {
                return stack.consumerCount(queue);
            } catch (IOException | JMException e) {
                throw new IllegalStateException(e);
            }
        };
        List<String> counts = new ArrayList<>();
        long last = -1;
        boolean dumped = false;
        Instant deadline = accepting.plus(GIVE_UP);
        Instant attached = null;
        while (attached == null) {
            Instant now = Instant.now();
            long count = count(attachedSessions);
            if (count != last) {
                counts.add(String.format(
                        "%+6d ms: %s",
                        Duration.between(accepting, now).toMillis(), count < 0 ? "no answer" : count + " sessions"));
                last = count;
            }
            if (count >= sessions) {
                attached = now;
            } else if (now.isAfter(deadline)) {
                throw new AssertionError(new Resumption(
                                what, fault, accepting, now, now, 0, 0, counts, AdapterLog.since(consumers, fault))
                        .timeline("not attached " + GIVE_UP.toSeconds() + " s after the broker accepted connections"));
            } else {
                if (!dumped && now.isAfter(accepting.plus(SLOW))) {
                    consumers.forEach(consumer -> consumer.process().threadDump());
                    dumped = true;
                }
                pause();
            }
        }
        Instant committed = firstCommitAfter(stack, queue, accepting);
        if (committed == null) {
            // Nothing was left to consume once they were back: attached is resumed.
            committed = attached;
        }
        return new Resumption(
                what,
                fault,
                accepting,
                attached,
                committed,
                consumers.stream()
                        .mapToLong(c -> AdapterLog.count(c, fault, SLOW_PATH))
                        .sum(),
                consumers.stream()
                        .mapToLong(c -> AdapterLog.count(c, fault, List.of(PING_FAILURE)))
                        .sum(),
                List.copyOf(counts),
                AdapterLog.since(consumers, fault));
    }

    long millis() {
        Instant back = committed.isAfter(attached) ? committed : attached;
        return Duration.between(accepting, back).toMillis();
    }

    /** Within {@code bound} and on the fast path, or fails with the timeline. */
    Resumption assertWithin(Duration bound) {
        System.out.println(describe());
        assertThat(millis())
                .as(() -> timeline("resumed later than " + bound.toMillis() + " ms"))
                .isLessThanOrEqualTo(bound.toMillis());
        assertThat(resets).as(() -> timeline("an activation was set up again")).isZero();
        return this;
    }

    String describe() {
        return String.format(
                "%-28s accepting %5d ms after the fault; attached +%5d ms, first commit +%5d ms: resumed %5d ms;"
                        + " activation resets %d, ping failures %d",
                what,
                Duration.between(fault, accepting).toMillis(),
                Duration.between(accepting, attached).toMillis(),
                Duration.between(accepting, committed).toMillis(),
                millis(),
                resets,
                pingFailures);
    }

    private String timeline(String verdict) {
        StringBuilder text =
                new StringBuilder(what + ": " + verdict + "; the fault at " + fault + ", the broker accepting "
                        + Duration.between(fault, accepting).toMillis() + " ms later; from then the broker's count:");
        counts.forEach(line -> text.append(System.lineSeparator()).append("  ").append(line));
        text.append(System.lineSeparator())
                .append("the consumers (a thread dump in the log of one still away after ")
                .append(SLOW.toSeconds())
                .append(" s):")
                .append(adapterLines);
        return text.toString();
    }

    private static long count(LongSupplier attachedSessions) {
        try {
            return attachedSessions.getAsLong();
        } catch (RuntimeException notYet) {
            return -1;
        }
    }

    private static Instant accepts(int port) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
            return Instant.now();
        }
    }

    /**
     * The first commit at or after {@code since}, by the database's clock (the same host's), or null if the queue is
     * empty without one: nothing was left to commit.
     */
    private static Instant firstCommitAfter(FaultStack stack, String queue, Instant since) {
        Instant[] first = new Instant[1];
        await().atMost(GIVE_UP)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(50))
                .ignoreExceptions()
                .until(() ->
                        (first[0] = firstCommit(stack.settings(), since)) != null || stack.messageCount(queue) == 0);
        return first[0];
    }

    private static Instant firstCommit(Settings settings, Instant since) throws SQLException {
        try (Connection db = Database.connect(settings)) {
            return firstCommit(db, since);
        }
    }

    /** The first dedup record at or after {@code since} in {@code db} (its transaction's start), or null. */
    static Instant firstCommit(Connection db, Instant since) throws SQLException {
        try (PreparedStatement query =
                db.prepareStatement("SELECT min(processed_at) FROM processed_events WHERE processed_at >= ?")) {
            query.setTimestamp(1, Timestamp.from(since));
            try (ResultSet row = query.executeQuery()) {
                row.next();
                Timestamp at = row.getTimestamp(1);
                return at == null ? null : at.toInstant();
            }
        }
    }

    private static void pause() {
        try {
            Thread.sleep(50);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
