package org.idempotent.bench;

import jakarta.json.JsonObject;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.idempotent.loadgen.MessageSet;
import org.idempotent.loadgen.PaymentProducer;
import org.idempotent.stack.AdminClient;
import org.idempotent.stack.Build;
import org.idempotent.stack.PayaraMicroProcess;

/**
 * Latency under a steady load: the message set sent at a fixed rate to a running instance (after unmeasured passes
 * over the same set), each payment's time from its send to its commit ({@link CommitLatency}) and each announcement's
 * from commit to arrival ({@link AnnouncementClock}), beside Payara's GC pauses. Then again, with 1,000,000 expired
 * dedup records purged (the admin call) while the set is sent: the latencies of the messages sent during the purge.
 */
final class PacedLatency {

    /** Producers, each sending its share of the set on the same schedule. */
    private static final int PRODUCERS = 4;
    /** Expired dedup records purged during the second pass. */
    private static final int EXPIRED_ROWS = 1_000_000;

    /** What the two passes of {@code label} measured, and the lines that say so. */
    record Measured(
            String label, CommitLatency.Latencies plain, CommitLatency.Latencies duringPurge, List<String> lines) {}

    private final BenchStack stack;
    private final ContainerRuns runs;
    private final MessageSet messages;
    private final Path out;
    private double offeredRate;

    PacedLatency(BenchStack stack, ContainerRuns runs, MessageSet messages, Path out) {
        this.stack = stack;
        this.runs = runs;
        this.messages = messages;
        this.out = out;
    }

    /**
     * At {@code rate} messages a second, after {@code warmups} unmeasured passes on the same instance; {@code jvm}:
     * Payara's JVM options beyond the product's (a compared variant's).
     */
    Measured measure(String label, int sessions, double rate, int warmups, List<String> jvm) throws Exception {
        stack.freshSchema();
        stack.preload(messages);
        stack.announcements().reset();
        String name = label.replaceAll("[^A-Za-z0-9]+", "-");
        Path gcLog = out.resolve("paced-gc-" + name + ".log");
        List<String> lines = new ArrayList<>();
        lines.add(label + ":");
        List<String> options = new ArrayList<>(jvm);
        options.add(GcPauses.option(gcLog));
        try (PayaraMicroProcess micro = PayaraMicroProcess.start(
                "bench-paced",
                stack.settings.with("CONSUMER_MAX_SESSIONS", String.valueOf(sessions)),
                Build.WAR,
                false,
                null,
                options)) {
            Instant started = Instant.now();
            runs.drain("product, paced warm-up" + Result.COLD, sessions, messages, micro, true, false, 0);
            // A steady load meets a consumer that has been running: its JIT done with the path, not one pass old.
            for (int pass = 1; pass < warmups; pass++) {
                stack.again(messages, started);
                runs.drain("product, paced warm-up " + (pass + 1), sessions, messages, micro, true, false, 0);
            }
            Instant from = Instant.now();
            CommitLatency.Measured plain = pass(rate, micro, null).between(stack.settings, null, null);
            plain.write(out.resolve("latency-" + name + ".csv"));
            lines.add(String.format(
                    Locale.ROOT,
                    "  send -> commit at %.0f msg/s offered (half the warm rate %.0f at N=%d): %s; Payara %s; broker %s",
                    offeredRate,
                    rate * 2,
                    sessions,
                    plain.total(),
                    GcPauses.between(gcLog, from, Instant.now()),
                    GcPauses.between(stack.brokerGcLog, from, Instant.now())));
            lines.add("    of which " + plain.split());
            lines.add("  commit -> announcement, the same pass: "
                    + stack.announcements().percentiles());
            Instant[] purge = new Instant[2];
            CommitLatency.Measured purged = pass(rate, micro, purge).between(stack.settings, purge[0], purge[1]);
            purged.write(out.resolve("latency-during-purge-" + name + ".csv"));
            lines.add(String.format(
                    Locale.ROOT,
                    "  send -> commit at %.0f msg/s offered, sent during the purge of %,d expired rows (%.1f s): %s; Payara %s;"
                            + " broker %s",
                    offeredRate,
                    EXPIRED_ROWS,
                    Duration.between(purge[0], purge[1]).toMillis() / 1e3,
                    purged.total(),
                    GcPauses.between(gcLog, purge[0], purge[1]),
                    GcPauses.between(stack.brokerGcLog, purge[0], purge[1])));
            lines.add("    of which " + purged.split());
            lines.forEach(line -> System.out.println("  " + line));
            return new Measured(label, plain.total(), purged.total(), lines);
        }
    }

    /**
     * One paced pass over the set on a running instance, from an empty ledger; with {@code purge} given, 1,000,000
     * expired dedup records in the table and their purge started a fifth into the pass (its start and end put there).
     */
    private CommitLatency pass(double rate, PayaraMicroProcess micro, Instant[] purge) throws Exception {
        stack.sql("TRUNCATE accounts, payment_announcements, processed_events");
        if (purge != null) {
            stack.sql(
                    "INSERT INTO processed_events (event_id, processed_at, id_version) SELECT gen_random_uuid(), now() - "
                            + "interval '30 days' + i * interval '1 millisecond', 4 FROM generate_series(1, "
                            + EXPIRED_ROWS + ") i",
                    "VACUUM ANALYZE processed_events");
        }
        stack.announcements().reset();
        CommitLatency latency = new CommitLatency();
        List<MessageSet.Event> all = messages.events();
        CompletableFuture<Void> purging = purge == null
                ? CompletableFuture.completedFuture(null)
                : CompletableFuture.runAsync(
                        () -> purge(micro, purge),
                        CompletableFuture.delayedExecutor(
                                (long) (all.size() / 5 / rate * 1000), TimeUnit.MILLISECONDS));
        long start = System.nanoTime();
        // Message i is due at start + i / rate. A synchronous persistent send waits for the broker's journal; one
        // producer alone falls behind the rate, so several share the set, each sending every PRODUCERS-th message.
        ExecutorService producers = Executors.newFixedThreadPool(PRODUCERS);
        List<Future<?>> sending = new ArrayList<>();
        for (int p = 0; p < PRODUCERS; p++) {
            int first = p;
            sending.add(producers.submit(() -> {
                try (PaymentProducer producer = new PaymentProducer(stack.settings, stack.queue())) {
                    for (int i = first; i < all.size(); i += PRODUCERS) {
                        long due = start + (long) (i * 1e9 / rate);
                        while (System.nanoTime() < due) {
                            LockSupport.parkNanos(due - System.nanoTime());
                        }
                        MessageSet.Event e = all.get(i);
                        Instant called = Instant.now();
                        producer.sendText(e.json());
                        latency.sent(e.id(), called, Instant.now());
                    }
                }
                return null;
            }));
        }
        for (Future<?> done : sending) {
            done.get();
        }
        producers.shutdown();
        offeredRate = all.size() / ((System.nanoTime() - start) / 1e9);
        long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
        while ((stack.broker().messageCount(stack.queue()) > 0 || stack.unsentAnnouncements() > 0)
                && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        while (stack.announcements().received() < messages.distinct().size() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        purging.get(5, TimeUnit.MINUTES);
        stack.checkBalances(messages);
        return latency;
    }

    /** The purge by the admin call, which returns when it is done; it must have deleted exactly the expired rows. */
    private void purge(PayaraMicroProcess micro, Instant[] window) {
        AdminClient admin =
                AdminClient.as(micro, stack.settings.get("ADMIN_USER"), stack.settings.get("ADMIN_PASSWORD"));
        window[0] = Instant.now();
        JsonObject run = admin.postJson("/admin/retention/purge");
        window[1] = Instant.now();
        if (run.getJsonNumber("rowsDeleted").longValue() != EXPIRED_ROWS
                || !"COMPLETED".equals(run.getString("outcome"))) {
            throw new IllegalStateException("the purge did not remove exactly the expired rows: " + run);
        }
    }
}
