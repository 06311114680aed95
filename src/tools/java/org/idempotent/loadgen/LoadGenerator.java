package org.idempotent.loadgen;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.idempotent.stack.Database;
import org.idempotent.stack.Settings;

/**
 * Sends N payment events with a fraction of duplicates (the same event ID and payload again, as a redelivering broker
 * or a retrying producer would), then watches the database until every distinct event is applied and checks each
 * balance against what was sent.
 *
 * <pre>mvn -Pload -Dload.args="--count 20000 --duplicates 0.2 --accounts 1000 --threads 4 --batch 100 --seed 42"</pre>
 */
public final class LoadGenerator {

    record Event(UUID id, String account, long amountCents) {}

    private LoadGenerator() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> options = options(args);
        int count = Integer.parseInt(options.getOrDefault("count", "20000"));
        double duplicates = Double.parseDouble(options.getOrDefault("duplicates", "0.2"));
        int accounts = Integer.parseInt(options.getOrDefault("accounts", "1000"));
        int threads = Integer.parseInt(options.getOrDefault("threads", "4"));
        int batch = Integer.parseInt(options.getOrDefault("batch", "100"));
        long seed = Long.parseLong(options.getOrDefault("seed", String.valueOf(System.nanoTime())));
        Duration timeout = Duration.ofSeconds(Long.parseLong(options.getOrDefault("timeout", "600")));
        if (count < 1 || duplicates < 0 || duplicates >= 1 || accounts < 1 || threads < 1 || batch < 1) {
            throw new IllegalArgumentException(
                    "need --count >= 1, 0 <= --duplicates < 1, --accounts >= 1, --threads >= 1, --batch >= 1");
        }
        Settings settings = Settings.fromEnvironment();
        Random random = new Random(seed);
        // The seed fixes the shape of the run (amounts, accounts, which events repeat, the order). Event IDs and
        // account names are new in every run, so that a rerun is not all duplicates of the last one and the balance
        // check is exact however many runs the database has seen.
        String run = Long.toString(System.currentTimeMillis(), 36);
        List<Event> distinct = new ArrayList<>();
        int distinctCount = Math.max(1, (int) Math.round(count * (1 - duplicates)));
        for (int i = 0; i < distinctCount; i++) {
            distinct.add(new Event(
                    UUID.randomUUID(), "load-" + run + "-" + random.nextInt(accounts), 1 + random.nextInt(100_000)));
        }
        List<Event> messages = new ArrayList<>(distinct);
        while (messages.size() < count) {
            messages.add(distinct.get(random.nextInt(distinct.size())));
        }
        Collections.shuffle(messages, random);
        Map<String, Long> expected = new HashMap<>();
        distinct.forEach(e -> expected.merge(e.account(), e.amountCents(), Long::sum));

        System.out.printf(
                "Sending %d messages (%d distinct events, %d duplicates) to '%s' at %s, %d accounts, seed %d%n",
                count,
                distinctCount,
                count - distinctCount,
                settings.get("PAYMENTS_QUEUE"),
                settings.brokerUrl(),
                expected.size(),
                seed);
        long start = System.nanoTime();
        AtomicInteger sent = new AtomicInteger();
        ExecutorService senders = Executors.newFixedThreadPool(threads);
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            List<Event> share = messages.subList(t * count / threads, (t + 1) * count / threads);
            done.add(senders.submit(() -> {
                try (PaymentProducer producer = new PaymentProducer(settings, settings.get("PAYMENTS_QUEUE"), true)) {
                    int inBatch = 0;
                    for (Event e : share) {
                        producer.sendText(PaymentProducer.json(e.id(), e.account(), e.amountCents()));
                        if (++inBatch == batch) {
                            producer.commit();
                            sent.addAndGet(inBatch);
                            inBatch = 0;
                        }
                    }
                    producer.commit();
                    sent.addAndGet(inBatch);
                }
                return null;
            }));
        }
        try (Connection db = Database.connect(settings)) {
            Array ids =
                    db.createArrayOf("uuid", distinct.stream().map(Event::id).toArray());
            long applied = 0;
            long deadline = System.nanoTime() + timeout.toNanos();
            while (applied < distinctCount && System.nanoTime() < deadline) {
                Thread.sleep(1000);
                applied = countApplied(db, ids);
                System.out.printf(
                        "  sent %6d/%d   applied %6d/%d   %5.1f s%n",
                        sent.get(), count, applied, distinctCount, seconds(start));
            }
            for (Future<?> f : done) {
                f.get();
            }
            senders.shutdown();
            double elapsed = seconds(start);
            Map<String, Long> actual = balances(db, "load-" + run + "-%");
            int wrong = 0;
            for (Map.Entry<String, Long> account : expected.entrySet()) {
                Long balance = actual.get(account.getKey());
                if (!account.getValue().equals(balance)) {
                    if (wrong++ < 10) {
                        System.out.printf(
                                "  MISMATCH %s: expected %d, actual %s%n",
                                account.getKey(), account.getValue(), balance);
                    }
                }
            }
            System.out.printf(
                    "%nDrained %d messages in %.1f s: %.0f msg/s (%d distinct applied of %d)%n",
                    count, elapsed, count / elapsed, applied, distinctCount);
            System.out.printf(
                    "Balances: %d accounts checked, %d wrong, expected total %d, actual total %d -> %s%n",
                    expected.size(),
                    wrong,
                    expected.values().stream().mapToLong(Long::longValue).sum(),
                    actual.values().stream().mapToLong(Long::longValue).sum(),
                    wrong == 0 && applied == distinctCount ? "EXACT" : "WRONG");
            System.exit(wrong == 0 && applied == distinctCount ? 0 : 1);
        }
    }

    private static long countApplied(Connection db, Array ids) throws SQLException {
        try (PreparedStatement query =
                db.prepareStatement("SELECT count(*) FROM processed_events WHERE event_id = ANY (?)")) {
            query.setArray(1, ids);
            try (ResultSet row = query.executeQuery()) {
                row.next();
                return row.getLong(1);
            }
        }
    }

    private static Map<String, Long> balances(Connection db, String pattern) throws SQLException {
        Map<String, Long> balances = new HashMap<>();
        try (PreparedStatement query = db.prepareStatement("SELECT id, balance_cents FROM accounts WHERE id LIKE ?")) {
            query.setString(1, pattern);
            try (ResultSet rows = query.executeQuery()) {
                while (rows.next()) {
                    balances.put(rows.getString(1), rows.getLong(2));
                }
            }
        }
        return balances;
    }

    private static double seconds(long start) {
        return (System.nanoTime() - start) / 1e9;
    }

    private static Map<String, String> options(String[] args) {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 == args.length) {
                throw new IllegalArgumentException(
                        "usage: --count N --duplicates F --accounts N --threads N --batch N --seed N --timeout S");
            }
            options.put(args[i].substring(2), args[++i]);
        }
        return options;
    }
}
