package org.idempotent.loadgen;

import java.sql.Array;
import java.sql.Connection;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.idempotent.stack.Database;
import org.idempotent.stack.RunDatabase;
import org.idempotent.stack.Settings;

/**
 * Sends N payment events with a fraction of duplicates (the same event ID and payload again, as a redelivering broker
 * or a retrying producer would), then watches the database until every distinct event is applied and checks each
 * balance against what was sent.
 *
 * <pre>mvn -Pload -Dload.args="--count 20000 --duplicates 0.2 --accounts 1000 --threads 4 --batch 100 --seed 42"</pre>
 */
public final class LoadGenerator {

    private static final String USAGE =
            "--count N --duplicates F --refunds F --accounts N --threads N --batch N --seed N --timeout SECONDS";

    private LoadGenerator() {}

    public static void main(String[] args) throws Exception {
        Options options = Options.parse(
                args,
                Set.of("count", "duplicates", "refunds", "accounts", "threads", "batch", "seed", "timeout"),
                USAGE);
        int count = options.getInt("count", 20_000);
        long seed = options.getLong("seed", System.nanoTime());
        Duration timeout = Duration.ofSeconds(options.getLong("timeout", 600));
        Settings settings = RunDatabase.find(Settings.fromEnvironment());
        // Accounts of this run only, so that the balance check is exact however many runs the database has seen.
        String accounts = MessageSet.runPrefix("load");
        MessageSet messages = MessageSet.of(
                accounts,
                seed,
                count,
                options.getDouble("duplicates", 0.2),
                options.getInt("accounts", 1000),
                0,
                MessageSet.Ids.RANDOM,
                options.getDouble("refunds", 0.05));
        int distinctCount = messages.distinct().size();
        long refunds =
                messages.distinct().stream().filter(MessageSet.Event::isRefund).count();
        count = messages.validMessages();
        Map<String, Long> expected = messages.expectedBalances();

        System.out.printf(
                "Sending %d messages (%d distinct events, %d of them refunds, %d duplicates) to '%s' and '%s' at %s,"
                        + " %d accounts, seed %d%n",
                count,
                distinctCount,
                refunds,
                count - distinctCount,
                settings.get("PAYMENTS_QUEUE"),
                settings.get("REFUNDS_QUEUE"),
                settings.brokerUrl(),
                expected.size(),
                seed);
        MessageSet.Event first = messages.distinct().get(0);
        System.out.printf(
                "Every message carries a traceparent whose trace ID is its event ID without dashes: with tracing on,"
                        + " event %s (account %s) is trace %s%n",
                first.id(), first.account(), Traffic.traceId(first.id()));
        long start = System.nanoTime();
        Traffic traffic =
                Traffic.start(settings, messages.items(), options.getInt("threads", 4), options.getInt("batch", 100));
        try (Connection db = Database.connect(settings)) {
            Array ids = db.createArrayOf("uuid", messages.distinctIds().toArray());
            long applied = 0;
            long deadline = System.nanoTime() + timeout.toNanos();
            while (applied < distinctCount && System.nanoTime() < deadline) {
                Thread.sleep(1000);
                applied = Regimes.countApplied(db, ids);
                System.out.printf(
                        "  sent %6d/%d   applied %6d/%d   %5.1f s%n",
                        traffic.sent(), count, applied, distinctCount, seconds(start));
            }
            traffic.await();
            double elapsed = seconds(start);
            Map<String, Long> actual = Regimes.balances(db, accounts + "%");
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

    private static double seconds(long start) {
        return (System.nanoTime() - start) / 1e9;
    }
}
