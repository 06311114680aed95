package org.idempotent.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
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
              FROM processed_events""";

    private final Map<UUID, Long> firstSent = new ConcurrentHashMap<>();

    /** Just before the send of a message carrying {@code event}; from any producer thread. */
    void sending(UUID event) {
        firstSent.merge(event, micros(Instant.now()), Math::min);
    }

    /**
     * The events first sent within [from, to) (null bounds are open): send to commit, and the same split in two, send to
     * the start of the payment's transaction (the broker, the queue, the delivery, parsing) and the transaction itself
     * (its statements, the commit's WAL flush, row locks waited for). One read of the commit timestamps.
     */
    record Measured(Latencies total, Latencies beforeTransaction, Latencies transaction) {

        String split() {
            return "send -> transaction start " + beforeTransaction + "; transaction start -> commit " + transaction;
        }
    }

    Measured between(Settings db, Instant from, Instant to) throws SQLException {
        Map<UUID, long[]> committed = new HashMap<>();
        try (Connection connection = Database.connect(db);
                PreparedStatement query = connection.prepareStatement(COMMITS);
                ResultSet rows = query.executeQuery()) {
            while (rows.next()) {
                committed.put(rows.getObject(1, UUID.class), new long[] {rows.getLong(2), rows.getLong(3)});
            }
        }
        long lower = from == null ? Long.MIN_VALUE : micros(from);
        long upper = to == null ? Long.MAX_VALUE : micros(to);
        List<long[]> times = firstSent.entrySet().stream()
                .filter(sent -> sent.getValue() >= lower && sent.getValue() < upper)
                .map(sent -> {
                    long[] commit = committed.get(sent.getKey());
                    if (commit == null) {
                        throw new IllegalStateException("event " + sent.getKey() + " was sent and never committed");
                    }
                    return new long[] {sent.getValue(), commit[1], commit[0]};
                })
                .toList();
        return new Measured(
                new Latencies(
                        times.stream().mapToLong(t -> t[2] - t[0]).sorted().toArray()),
                new Latencies(
                        times.stream().mapToLong(t -> t[1] - t[0]).sorted().toArray()),
                new Latencies(
                        times.stream().mapToLong(t -> t[2] - t[1]).sorted().toArray()));
    }

    /** Send-to-commit times in microseconds, sorted. */
    record Latencies(long[] sorted) {

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
