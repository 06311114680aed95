package org.idempotent.bench;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.StringReader;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.idempotent.loadgen.PaymentProducer;
import org.idempotent.stack.AdminClient;
import org.idempotent.stack.Database;
import org.idempotent.stack.InstanceMetrics;
import org.idempotent.stack.PayaraInstance;
import org.idempotent.stack.RunDatabase;
import org.idempotent.stack.Settings;

/**
 * What a purge of 1,000,000 expired dedup records costs the consumer, measured side by side in one run against the
 * running stack ({@code mvn -Prun}): {@code mvn -Pbench-retention}.
 *
 * <p>A backlog keeps the consumer busy throughout. In each round the consumer's rate is measured over a window with no
 * purge, then over the purge of 1,000,000 rows older than the window (filled beforehand), by the instance's own
 * message counter. Printed: purge rows/s and the consumer's rate during the purge as a ratio of its rate without.
 */
public final class RetentionBenchmark {

    private static final int ROUNDS = 3;
    private static final int EXPIRED_ROWS = 1_000_000;
    private static final long BASELINE_MILLIS = 5_000;

    private RetentionBenchmark() {}

    public static void main(String[] args) throws Exception {
        Settings settings = RunDatabase.find(Settings.fromEnvironment());
        PayaraInstance instance = PayaraInstance.at(settings.getInt("HTTP_PORT"));
        InstanceMetrics metrics = new InstanceMetrics(instance);
        AdminClient admin = AdminClient.as(instance, settings.get("ADMIN_USER"), settings.get("ADMIN_PASSWORD"));
        admin.postJson("/admin/retention/purge");

        AtomicBoolean running = new AtomicBoolean(true);
        CompletableFuture<Void> backlog = CompletableFuture.runAsync(() -> keepBacklog(settings, metrics, running));
        List<double[]> rounds = new ArrayList<>();
        try {
            for (int round = 1; round <= ROUNDS; round++) {
                fillExpired(settings);
                long before = consumed(metrics);
                long t0 = System.nanoTime();
                Thread.sleep(BASELINE_MILLIS);
                double baseline = (consumed(metrics) - before) / seconds(t0);

                before = consumed(metrics);
                t0 = System.nanoTime();
                JsonObject run = admin.postJson("/admin/retention/purge");
                double purgeSeconds = seconds(t0);
                double during = (consumed(metrics) - before) / purgeSeconds;
                long deleted = run.getJsonNumber("rowsDeleted").longValue();
                if (deleted != EXPIRED_ROWS || !"COMPLETED".equals(run.getString("outcome"))) {
                    throw new IllegalStateException("purge did not remove exactly the expired rows: " + run);
                }
                rounds.add(new double[] {deleted / purgeSeconds, baseline, during});
                System.out.printf(
                        Locale.ROOT,
                        "round %d: purge %,d rows in %.2f s (%,.0f rows/s); consumer %.0f msg/s "
                                + "without purge, %.0f msg/s during it: ratio %.2f%n",
                        round,
                        deleted,
                        purgeSeconds,
                        deleted / purgeSeconds,
                        baseline,
                        during,
                        during / baseline);
            }
        } finally {
            running.set(false);
            backlog.join();
        }
        double rows = rounds.stream().mapToDouble(r -> r[0]).average().orElseThrow();
        double baseline = rounds.stream().mapToDouble(r -> r[1]).sum();
        double during = rounds.stream().mapToDouble(r -> r[2]).sum();
        // The batch size the server actually used, not this JVM's idea of it.
        int batch = Json.createReader(
                        new StringReader(admin.get("/admin/retention").body()))
                .readObject()
                .getJsonObject("policy")
                .getInt("batchSize");
        System.out.printf(
                Locale.ROOT,
                "%nRetention benchmark (%d rounds, batch %d): purge %,.0f rows/s; consumer "
                        + "throughput during purge / without = %.2f%n",
                ROUNDS,
                batch,
                rows,
                during / baseline);
    }

    /** Keeps about 2,000 messages waiting, so that the consumer never idles while it is measured. */
    private static void keepBacklog(Settings settings, InstanceMetrics metrics, AtomicBoolean running) {
        try (PaymentProducer producer = new PaymentProducer(settings, settings.get("PAYMENTS_QUEUE"), true)) {
            long sent = 0;
            long start = consumed(metrics);
            String account = "bench-retention-" + UUID.randomUUID().toString().substring(0, 8);
            while (running.get()) {
                if (sent - (consumed(metrics) - start) < 2_000) {
                    for (int i = 0; i < 500; i++) {
                        producer.sendText(PaymentProducer.json(UUID.randomUUID(), account + "-" + (i % 100), 1));
                    }
                    producer.commit();
                    sent += 500;
                } else {
                    Thread.sleep(50);
                }
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static void fillExpired(Settings settings) throws SQLException {
        try (Connection db = Database.connect(settings);
                PreparedStatement fill = db.prepareStatement(
                        "INSERT INTO processed_events (event_id, processed_at, id_version) SELECT gen_random_uuid(), "
                                + "now() - interval '30 days' + i * interval '1 millisecond', 4 FROM generate_series(1, ?) i")) {
            fill.setInt(1, EXPIRED_ROWS);
            fill.executeUpdate();
        }
        try (Connection db = Database.connect(settings);
                PreparedStatement analyze = db.prepareStatement("VACUUM ANALYZE processed_events")) {
            analyze.execute();
        }
    }

    private static long consumed(InstanceMetrics metrics) {
        return metrics.outcome("applied") + metrics.outcome("duplicate");
    }

    private static double seconds(long start) {
        return (System.nanoTime() - start) / 1e9;
    }
}
