package org.idempotent.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.idempotent.loadgen.MessageSet;
import org.idempotent.payment.control.Payments;
import org.idempotent.stack.Database;

/**
 * The database's own ceiling: the product's transaction (INSERT processed_events, rolled back on a unique violation,
 * else the guarded upsert) issued over JDBC by N threads, no broker and no Payara. PostgreSQL's CPU is counted once
 * the backends have exited.
 */
final class DbCeiling {

    static final String VARIANT = "DB ceiling (JDBC)";

    /** The product's dedup insert (JPA writes it from ProcessedEvent) and its guarded upsert, in JDBC's form. */
    /** As the product writes it: the ID's version too, the table by event ID's partition key. */
    static final String INSERT = "INSERT INTO processed_events (event_id, fingerprint, id_version) VALUES (?, ?, ?)";

    static final String UPSERT =
            Payments.GUARDED_UPSERT.replace("?1", "?").replace("?2", "?").replace("?3", "?");

    private DbCeiling() {}

    static Result run(BenchStack stack, MessageSet messages, int threads) throws Exception {
        stack.freshSchema();
        AtomicInteger next = new AtomicInteger();
        List<MessageSet.Event> all = messages.events();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        long postmaster = stack.postgres.postmasterPid();
        long backends = CpuTime.childrenOf(postmaster);
        double postgresCpu = CpuTime.ofPostgres(postmaster);
        long start = System.nanoTime();
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            done.add(pool.submit(() -> {
                apply(stack, all, next);
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get();
        }
        pool.shutdown();
        double seconds = (System.nanoTime() - start) / 1e9;
        // A closed connection's backend exits a moment later: its CPU counts once it has (the postmaster's children).
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (CpuTime.childrenOf(postmaster) > backends && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        System.out.printf(
                Locale.ROOT,
                "    CPU per message: PostgreSQL %.2f ms%n",
                (CpuTime.ofPostgres(postmaster) - postgresCpu) / all.size());
        return new Result(VARIANT, threads, all.size(), seconds, stack.checkBalances(messages), 0, 0, 0, null, null, 0);
    }

    /** Takes the next event until none is left, each in a transaction of its own. */
    private static void apply(BenchStack stack, List<MessageSet.Event> all, AtomicInteger next) throws SQLException {
        try (Connection db = Database.connect(stack.settings);
                PreparedStatement insert = db.prepareStatement(INSERT);
                PreparedStatement upsert = db.prepareStatement(UPSERT)) {
            db.setAutoCommit(false);
            for (int i = next.getAndIncrement(); i < all.size(); i = next.getAndIncrement()) {
                MessageSet.Event e = all.get(i);
                try {
                    insert.setObject(1, e.id());
                    insert.setBytes(2, e.fingerprint());
                    insert.setShort(3, (short) e.id().version());
                    insert.executeUpdate();
                } catch (SQLException duplicate) {
                    if (!"23505".equals(duplicate.getSQLState())) {
                        throw duplicate;
                    }
                    db.rollback();
                    continue;
                }
                upsert.setString(1, e.account());
                upsert.setLong(2, e.amountCents());
                upsert.setObject(3, e.id());
                upsert.executeUpdate();
                db.commit();
            }
        }
    }
}
