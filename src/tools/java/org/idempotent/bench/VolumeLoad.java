package org.idempotent.bench;

import jakarta.json.JsonObject;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.idempotent.loadgen.PaymentProducer;
import org.idempotent.stack.AdminClient;
import org.idempotent.stack.PayaraMicroProcess;

/**
 * A phase of the volume benchmark: payments sent at a fixed rate to a running instance for a time, each one's send to
 * commit measured ({@link CommitLatency}); with retention, a purge by the admin call (the shipped Retention.purge(),
 * its slice, rate and time budget) and the outbox's upkeep beside it, started a fifth into the phase, but not before
 * {@link #BEFORE_PURGE} (so that the minute before it is measured too), the purge called again while a run stops at
 * its time budget, the phase lasting at least until the purge is done. Open-ended: events are made as they are sent (v4 or time-ordered v7 IDs),
 * a fifth of them copies of one of the producer's recent events, as in the benchmark's message sets.
 */
final class VolumeLoad {

    /** Producers, each sending every PRODUCERS-th message of the schedule. */
    private static final int PRODUCERS = 4;

    private static final double COPIES = 0.2;
    private static final int ACCOUNTS = 1000;
    /** A purge call answers when its run is done: up to the shipped time budget (840 s), and then some. */
    private static final Duration PURGE_CALL = Duration.ofMinutes(15);
    /** The purge's tail is judged over a minute from its start, against the minute before it. */
    static final Duration BEFORE_PURGE = Duration.ofSeconds(65);

    static final Duration AROUND_PURGE = Duration.ofSeconds(60);

    /** What retention did in a phase; {@code cutoff} that of its last run, as the server wrote it. */
    record Purge(long rows, int runs, Instant from, Instant to, String cutoff) {

        double seconds() {
            return Duration.between(from, to).toMillis() / 1e3;
        }

        double rowsPerSecond() {
            return rows / seconds();
        }
    }

    /**
     * A phase's figures: the rate offered and the one consumed, send to commit, and the purge if one ran, with send to
     * commit of the payments sent in the minute before it ({@code before}) and from its start for a minute, or until
     * it ended if it took longer ({@code around}).
     */
    record Phase(
            String name,
            double offered,
            double consumed,
            CommitLatency.Latencies latency,
            String split,
            Purge purge,
            CommitLatency.Latencies before,
            CommitLatency.Latencies around) {}

    private final BenchStack stack;
    private final double rate;
    private final boolean timeOrdered;
    /** The benchmark's output directory: the phases' wait samples, Payara's GC logs. */
    private final Path out;

    /** @param timeOrdered whether the events carry time-ordered v7 IDs (RFC 9562), else random v4 IDs */
    VolumeLoad(BenchStack stack, double rate, boolean timeOrdered, Path out) {
        this.stack = stack;
        this.rate = rate;
        this.timeOrdered = timeOrdered;
        this.out = out;
    }

    /** The phase, watched from its start to its end ({@link PhaseWaits}) to name what its worst commits waited for. */
    Phase run(String name, PayaraMicroProcess micro, Duration length, boolean retention) throws Exception {
        try (PhaseWaits waits = PhaseWaits.start(stack, out, name, out.resolve(micro.name() + "-gc.log"))) {
            return run(name, micro, length, retention, waits);
        }
    }

    private Phase run(String name, PayaraMicroProcess micro, Duration length, boolean retention, PhaseWaits waits)
            throws Exception {
        CommitLatency latency = new CommitLatency();
        AtomicBoolean sending = new AtomicBoolean(true);
        AtomicLong sent = new AtomicLong();
        String prefix = "volume-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        long start = System.nanoTime();
        ExecutorService producers = Executors.newFixedThreadPool(PRODUCERS);
        List<Future<?>> running = new ArrayList<>();
        for (int p = 0; p < PRODUCERS; p++) {
            int first = p;
            running.add(producers.submit(() -> send(first, start, prefix, sending, sent, latency)));
        }
        Purge purge = null;
        try {
            long fifth = Math.max(length.toNanos() / 5, retention ? BEFORE_PURGE.toNanos() : 0);
            Thread.sleep(fifth / 1_000_000);
            if (retention) {
                CompletableFuture<String> outboxUpkeep = CompletableFuture.supplyAsync(() -> outboxUpkeep(micro));
                purge = purge(micro);
                System.out.printf(Locale.ROOT, "    outbox upkeep, started with the purge: %s%n", outboxUpkeep.join());
            }
            long end = start + length.toNanos();
            while (System.nanoTime() < end) {
                Thread.sleep(100);
            }
        } finally {
            sending.set(false);
            for (Future<?> producer : running) {
                producer.get();
            }
            producers.shutdown();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
        while ((stack.broker().messageCount(stack.queue()) > 0 || stack.unsentAnnouncements() > 0)
                && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        double drained = (System.nanoTime() - start) / 1e9;
        waits.stop();
        CommitLatency.Measured measured = purge == null
                ? latency.between(stack.settings, null, null)
                : latency.between(stack.settings, purge.from(), purge.to());
        CommitLatency.Latencies before = null;
        CommitLatency.Latencies around = null;
        if (purge != null) {
            before = latency.between(stack.settings, purge.from().minus(AROUND_PURGE), purge.from())
                    .total();
            around = latency.between(stack.settings, purge.from(), purge.from().plus(AROUND_PURGE))
                    .total();
        }
        Phase phase = new Phase(
                name,
                sent.get() / seconds,
                sent.get() / drained,
                measured.total(),
                measured.split(),
                purge,
                before,
                around);
        System.out.printf(
                Locale.ROOT,
                "  %s: %,d messages at %.0f msg/s offered, %.0f msg/s consumed (until the queue was empty);"
                        + " send -> commit%s %s%n    of which %s%n",
                name,
                sent.get(),
                phase.offered(),
                phase.consumed(),
                purge == null ? "" : " of those sent during the purge",
                measured.total(),
                measured.split());
        if (purge != null) {
            System.out.printf(
                    Locale.ROOT,
                    "    purge: %,d rows in %.1f s (%,.0f rows/s), %d run(s) of the admin call%n",
                    purge.rows(),
                    purge.seconds(),
                    purge.rowsPerSecond(),
                    purge.runs());
            System.out.printf(
                    Locale.ROOT,
                    "    send -> commit in the minute before the purge %s; in the minute from its start %s%n",
                    before,
                    around);
        }
        waits.print(
                purge == null
                        ? measured.times()
                        : latency.between(stack.settings, null, null).times(),
                purge == null ? null : purge.from());
        return phase;
    }

    /** The outbox's upkeep by its admin call, as its timer runs it: the rows that went, and how long it took. */
    private String outboxUpkeep(PayaraMicroProcess micro) {
        AdminClient admin =
                AdminClient.as(micro, stack.settings.get("ADMIN_USER"), stack.settings.get("ADMIN_PASSWORD"));
        long start = System.nanoTime();
        JsonObject upkeep = admin.postJson("/admin/announcements/purge", PURGE_CALL);
        return String.format(
                Locale.ROOT,
                "%,d announcements dropped in %.1f s",
                upkeep.getJsonNumber("deleted").longValue(),
                (System.nanoTime() - start) / 1e9);
    }

    /** Purge runs until one completes: a run that spends its time budget stops, and the next goes on. */
    private Purge purge(PayaraMicroProcess micro) {
        AdminClient admin =
                AdminClient.as(micro, stack.settings.get("ADMIN_USER"), stack.settings.get("ADMIN_PASSWORD"));
        Instant from = Instant.now();
        long rows = 0;
        int runs = 0;
        while (true) {
            JsonObject run = admin.postJson("/admin/retention/purge", PURGE_CALL);
            runs++;
            rows += run.getJsonNumber("rowsDeleted").longValue();
            String outcome = run.getString("outcome");
            if ("COMPLETED".equals(outcome)) {
                return new Purge(
                        rows,
                        runs,
                        from,
                        Instant.now(),
                        run.get("cutoff").toString().replace("\"", ""));
            }
            if (!"BUDGET_SPENT".equals(outcome)) {
                throw new IllegalStateException("the purge did not run: " + run);
            }
        }
    }

    /** A v7 ID made now: the Unix milliseconds first (RFC 9562), as a producer that assigns time-ordered IDs makes it. */
    private static UUID uuid7(Random random) {
        long most = (System.currentTimeMillis() << 16) | 0x7000L | (random.nextInt() & 0x0FFF);
        long least = (random.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
        return new UUID(most, least);
    }

    /** Message i of the schedule is due at start + i / rate; this producer sends i = first, first + PRODUCERS, ... */
    private Void send(
            int first, long start, String prefix, AtomicBoolean sending, AtomicLong sent, CommitLatency latency)
            throws Exception {
        Random random = new Random(first);
        UUID[] recent = new UUID[100];
        String[] accounts = new String[recent.length];
        try (PaymentProducer producer = new PaymentProducer(stack.settings, stack.queue())) {
            for (long i = first; sending.get(); i += PRODUCERS) {
                long due = start + (long) (i * 1e9 / rate);
                while (System.nanoTime() < due) {
                    LockSupport.parkNanos(due - System.nanoTime());
                }
                int slot = random.nextInt(recent.length);
                boolean copy = recent[slot] != null && random.nextDouble() < COPIES;
                if (!copy) {
                    recent[slot] = timeOrdered ? uuid7(random) : UUID.randomUUID();
                    accounts[slot] = prefix + random.nextInt(ACCOUNTS);
                }
                // A copy carries the same payload: the same amount, derived from the ID.
                long amount = 1 + Math.floorMod(recent[slot].getLeastSignificantBits(), 100_000);
                Instant called = Instant.now();
                producer.sendText(PaymentProducer.json(recent[slot], accounts[slot], amount));
                latency.sent(recent[slot], called, Instant.now());
                sent.incrementAndGet();
            }
        }
        return null;
    }
}
