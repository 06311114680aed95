package org.idempotent.faults;

import jakarta.jms.JMSException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;
import org.idempotent.loadgen.MessageSet;
import org.idempotent.loadgen.MessageSet.Item;
import org.idempotent.loadgen.PaymentProducer;
import org.idempotent.loadgen.Traffic;
import org.idempotent.stack.Settings;

/**
 * Producers that keep sending through a fault, as a producer application does: several threads, each committing its
 * share in small transacted batches over a client that follows the live broker and reconnects. A batch whose commit
 * failed has an unknown outcome (the broker may have stored it and lost only the answer): it is sent again, same
 * event IDs, same bodies, until a commit succeeds, so both copies may be on the queue. A batch still failing after
 * {@link #GIVE_UP} is given up. Each thread keeps its ledger; together they say what the consumer owes:
 * every acknowledged event applied exactly once, every given-up one at most once.
 */
final class ResendingProducers {

    /** How long a producer keeps sending one batch again before it gives it up. */
    static final Duration GIVE_UP = Duration.ofSeconds(90);

    private static final int BATCH = 20;
    private static final Duration FIRST_PAUSE = Duration.ofMillis(100);
    private static final Duration LONGEST_PAUSE = Duration.ofSeconds(2);

    /** What the producers saw. */
    record Ledger(
            Set<UUID> acknowledged,
            Set<UUID> givenUp,
            Set<UUID> resent,
            int failedCommits,
            int failedSends,
            Duration longestInterruption) {

        /** One line for a scenario's report. */
        String describe() {
            return String.format(
                    "%d acknowledged, %d given up, %d sent twice after %d failed commits, %d failed sends;"
                            + " longest interruption %.1f s",
                    acknowledged.size(),
                    givenUp.size(),
                    resent.size(),
                    failedCommits,
                    failedSends,
                    longestInterruption.toMillis() / 1000.0);
        }
    }

    private final CompletableFuture<Void> done;
    private final Set<UUID> acknowledged = ConcurrentHashMap.newKeySet();
    /** When the broker first acknowledged each event's send: where a send-to-commit latency starts. */
    private final Map<UUID, java.time.Instant> acknowledgedAt = new ConcurrentHashMap<>();

    private final Set<UUID> givenUp = ConcurrentHashMap.newKeySet();
    private final Set<UUID> resent = ConcurrentHashMap.newKeySet();
    private final AtomicInteger failedCommits = new AtomicInteger();
    private final AtomicInteger failedSends = new AtomicInteger();
    private final AtomicLong longestInterruption = new AtomicLong();

    private final int total;
    /** Nanoseconds between two batches of one producer: the pace that keeps them sending while the fault comes. */
    private final long batchInterval;

    private ResendingProducers(
            Settings settings, IntFunction<String> urlOfThread, List<Item> items, int threads, int perSecond) {
        total = items.size();
        batchInterval = Duration.ofSeconds(1).toNanos() * BATCH * threads / perSecond;
        ExecutorService producers = Executors.newFixedThreadPool(threads);
        CompletableFuture<?>[] shares = new CompletableFuture<?>[threads];
        for (int t = 0; t < threads; t++) {
            List<Item> share = items.subList(t * items.size() / threads, (t + 1) * items.size() / threads);
            String url = urlOfThread.apply(t);
            shares[t] = CompletableFuture.runAsync(() -> send(settings, url, share), producers);
        }
        done = CompletableFuture.allOf(shares).whenComplete((ignored, failure) -> producers.shutdown());
    }

    /**
     * Starts sending {@code workload} from {@code threads} producers at about {@code perSecond} messages a second in
     * all (slower while a fault holds them up, never faster to catch up).
     */
    static ResendingProducers start(Settings settings, MessageSet workload, int threads, int perSecond) {
        return new ResendingProducers(settings, thread -> settings.brokerHaUrl(), workload.items(), threads, perSecond);
    }

    /**
     * The same, every other thread starting on the other of the two brokers named (each goes on to the other when its
     * own fails): on a cluster both nodes take sends from the first batch, as from producers that connect at random,
     * without the one time in eight that all four start on one node.
     */
    static ResendingProducers startSpread(Settings settings, MessageSet workload, int threads, int perSecond) {
        return new ResendingProducers(
                settings, thread -> settings.brokerHaUrlListing(thread % 2 == 1), workload.items(), threads, perSecond);
    }

    /** Whether this fraction of the workload's messages has been acknowledged (or given up) so far. */
    boolean reached(double fraction) {
        return acknowledged.size() + givenUp.size() >= Math.ceil(total * fraction);
    }

    /** When each event's send was first acknowledged, so far. */
    Map<UUID, java.time.Instant> acknowledgedAt() {
        return Map.copyOf(acknowledgedAt);
    }

    /** Waits until every batch is acknowledged or given up, and returns the ledger. */
    Ledger await() {
        done.join();
        return new Ledger(
                Set.copyOf(acknowledged),
                Set.copyOf(givenUp),
                Set.copyOf(resent),
                failedCommits.get(),
                failedSends.get(),
                Duration.ofNanos(longestInterruption.get()));
    }

    private void send(Settings settings, String url, List<Item> share) {
        PaymentProducer producer = null;
        try {
            long next = System.nanoTime();
            for (int from = 0; from < share.size(); from += BATCH) {
                producer =
                        sendBatch(settings, url, producer, share.subList(from, Math.min(share.size(), from + BATCH)));
                next = Math.max(next + batchInterval, System.nanoTime());
                pause(Duration.ofNanos(next - System.nanoTime()));
            }
        } finally {
            close(producer);
        }
    }

    /** Returns the producer to go on with (a fresh one after a failure). */
    private PaymentProducer sendBatch(Settings settings, String url, PaymentProducer producer, List<Item> batch) {
        long started = System.nanoTime();
        long firstFailure = 0;
        Duration pause = FIRST_PAUSE;
        while (true) {
            boolean committing = false;
            try {
                if (producer == null) {
                    producer = new PaymentProducer(settings, url, settings.get("PAYMENTS_QUEUE"), true);
                }
                for (Item item : batch) {
                    Traffic.send(settings, producer, item);
                }
                committing = true;
                producer.commit();
                java.time.Instant now = java.time.Instant.now();
                batch.forEach(item -> {
                    acknowledged.add(id(item));
                    acknowledgedAt.putIfAbsent(id(item), now);
                });
                if (firstFailure != 0) {
                    // From the first attempt: a call may block for its whole timeout before it fails.
                    longestInterruption.accumulateAndGet(System.nanoTime() - started, Math::max);
                }
                return producer;
            } catch (JMSException | RuntimeException e) {
                if (committing) {
                    // The commit's answer is lost, not necessarily the commit: what it held goes again.
                    failedCommits.incrementAndGet();
                    batch.forEach(item -> resent.add(id(item)));
                } else {
                    failedSends.incrementAndGet();
                }
                close(producer);
                producer = null;
                if (firstFailure == 0) {
                    firstFailure = System.nanoTime();
                } else if (System.nanoTime() - firstFailure > GIVE_UP.toNanos()) {
                    batch.forEach(item -> givenUp.add(id(item)));
                    return null;
                }
                pause(pause);
                pause = pause.multipliedBy(2).compareTo(LONGEST_PAUSE) > 0 ? LONGEST_PAUSE : pause.multipliedBy(2);
            }
        }
    }

    /** An event's ID, or a poison message's probe. */
    static UUID id(Item item) {
        return item.event() != null ? item.event().id() : item.probe();
    }

    private static void pause(Duration pause) {
        if (pause.isNegative() || pause.isZero()) {
            return;
        }
        try {
            Thread.sleep(pause.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting to send again", e);
        }
    }

    private static void close(PaymentProducer producer) {
        if (producer == null) {
            return;
        }
        try {
            producer.close();
        } catch (JMSException | RuntimeException e) {
            // A connection that failed under it: nothing left to close.
        }
    }
}
