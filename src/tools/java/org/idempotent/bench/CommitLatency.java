package org.idempotent.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.idempotent.stack.Database;
import org.idempotent.stack.Settings;

/**
 * The time from a producer's send to the commit of the payment it carried: the send's time on this JVM's clock, the
 * commit's from PostgreSQL's commit timestamp of the event's processed_events row (track_commit_timestamp, on the
 * benchmark's own cluster; the row is inserted once and never updated, so its xmin is the payment's transaction).
 * Both are the machine's one wall clock, in microseconds. A copy of an event counts from its first send.
 */
final class CommitLatency {

    /** The commit, and the transaction's start (processed_at is now(), the time the transaction began). */
    private static final String COMMITS = """
            SELECT event_id, CAST(extract(epoch FROM pg_xact_commit_timestamp(xmin)) * 1000000 AS bigint),
                   CAST(extract(epoch FROM processed_at) * 1000000 AS bigint)
              FROM processed_events WHERE event_id = ANY (?)""";

    /** IDs asked for per query: the table may hold millions of rows the window did not send (--volume). */
    private static final int CHUNK = 10_000;

    /** Per event, its first send: when the send was called, and when it returned. */
    private final Map<UUID, long[]> firstSent = new ConcurrentHashMap<>();

    /**
     * A message carrying {@code event} was sent: {@code called} just before the producer's send, {@code returned} when
     * it returned (a persistent send returns once the broker has synced it to its journal). From any producer thread.
     */
    void sent(UUID event, Instant called, Instant returned) {
        firstSent.merge(event, new long[] {micros(called), micros(returned)}, (a, b) -> a[0] <= b[0] ? a : b);
    }

    /**
     * The events first sent within [from, to) (null bounds are open): send to commit, and the same split in three: the
     * producer's send (until the broker has it in its journal), from there to the start of the payment's transaction
     * (routing, the queue, the consumer's buffer, the delivery, parsing), and the transaction itself (its statements,
     * row locks waited for). One read of the commit timestamps.
     */
    record Measured(
            List<long[]> times, Latencies total, Latencies send, Latencies beforeTransaction, Latencies transaction) {

        /**
         * Every event's times, in the order they were sent, to see when a tail happened: milliseconds since the first
         * send, and the three parts of its latency.
         */
        void write(Path csv) throws IOException {
            long first = times.stream().mapToLong(t -> t[0]).min().orElse(0);
            StringBuilder out = new StringBuilder("sent_epoch_ms,sent_ms,send_ms,to_transaction_ms,transaction_ms\n");
            times.stream()
                    .sorted(Comparator.comparingLong(t -> t[0]))
                    .forEach(t -> out.append(String.format(
                            Locale.ROOT,
                            "%d,%.1f,%.2f,%.2f,%.2f%n",
                            t[0] / 1000,
                            (t[0] - first) / 1e3,
                            (t[1] - t[0]) / 1e3,
                            (t[2] - t[1]) / 1e3,
                            (t[3] - t[2]) / 1e3)));
            Files.writeString(csv, out);
        }

        String split() {
            return "the send " + send + "; send returned -> transaction start " + beforeTransaction
                    + "; transaction start -> commit " + transaction;
        }
    }

    Measured between(Settings db, Instant from, Instant to) throws SQLException {
        long lower = from == null ? Long.MIN_VALUE : micros(from);
        long upper = to == null ? Long.MAX_VALUE : micros(to);
        Map<UUID, long[]> window = new HashMap<>();
        firstSent.forEach((event, sent) -> {
            if (sent[0] >= lower && sent[0] < upper) {
                window.put(event, sent);
            }
        });
        Map<UUID, long[]> committed = commits(db, List.copyOf(window.keySet()));
        // Per event: send called, send returned, transaction start, commit.
        List<long[]> times = window.entrySet().stream()
                .map(sent -> {
                    long[] commit = committed.get(sent.getKey());
                    if (commit == null) {
                        throw new IllegalStateException("event " + sent.getKey() + " was sent and never committed");
                    }
                    return new long[] {sent.getValue()[0], sent.getValue()[1], commit[1], commit[0]};
                })
                .toList();
        return new Measured(
                times,
                Latencies.of(times, 0, 3),
                Latencies.of(times, 0, 1),
                Latencies.of(times, 1, 2),
                Latencies.of(times, 2, 3));
    }

    /** Per event of {@code events}: its commit and its transaction's start. */
    private static Map<UUID, long[]> commits(Settings db, List<UUID> events) throws SQLException {
        Map<UUID, long[]> committed = new HashMap<>();
        try (Connection connection = Database.connect(db);
                PreparedStatement query = connection.prepareStatement(COMMITS)) {
            for (int start = 0; start < events.size(); start += CHUNK) {
                List<UUID> chunk = events.subList(start, Math.min(events.size(), start + CHUNK));
                query.setArray(1, connection.createArrayOf("uuid", chunk.toArray()));
                try (ResultSet rows = query.executeQuery()) {
                    while (rows.next()) {
                        committed.put(rows.getObject(1, UUID.class), new long[] {rows.getLong(2), rows.getLong(3)});
                    }
                }
            }
        }
        return committed;
    }

    /** Durations in microseconds, sorted. */
    record Latencies(long[] sorted) {

        /** From point {@code from} to point {@code to} of each event's times. */
        static Latencies of(List<long[]> times, int from, int to) {
            return new Latencies(
                    times.stream().mapToLong(t -> t[to] - t[from]).sorted().toArray());
        }

        double millisAt(double quantile) {
            return sorted[Math.max(0, (int) Math.ceil(quantile * sorted.length) - 1)] / 1e3;
        }

        @Override
        public String toString() {
            if (sorted.length == 0) {
                return "no event sent in the window";
            }
            return String.format(
                    Locale.ROOT,
                    "p50 %.1f ms, p99 %.1f ms, p99.9 %.1f ms, max %.1f ms over %,d events",
                    millisAt(0.50),
                    millisAt(0.99),
                    millisAt(0.999),
                    sorted[sorted.length - 1] / 1e3,
                    sorted.length);
        }
    }

    private static long micros(Instant instant) {
        return ChronoUnit.MICROS.between(Instant.EPOCH, instant);
    }
}
