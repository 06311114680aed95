package org.idempotent.retention.control;

import jakarta.annotation.PostConstruct;
import jakarta.annotation.Resource;
import jakarta.ejb.Lock;
import jakarta.ejb.LockType;
import jakarta.ejb.Singleton;
import jakarta.ejb.TransactionManagement;
import jakarta.ejb.TransactionManagementType;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.metrics.Counter;
import org.eclipse.microprofile.metrics.MetricRegistry;
import org.idempotent.Resources;
import org.idempotent.retention.entity.PurgeRun;
import org.idempotent.retention.entity.PurgeRun.Outcome;
import org.idempotent.retention.entity.RetentionPolicy;
import org.idempotent.retention.entity.UnsafeRetention;

/**
 * Deletes processed_events rows older than the retention window: in batches, each its own short transaction, so that
 * no long lock stalls the consumers; under a PostgreSQL advisory lock, so that one instance purges at a time however
 * many share the database. The configuration is read, and checked, on every run.
 */
@Singleton
@Lock(LockType.READ)
@TransactionManagement(TransactionManagementType.BEAN)
public class Retention {

    /** Advisory lock key of the purge ("retentio" in ASCII), the same on every instance. */
    static final long LOCK_KEY = 0x726574656e74696fL;

    static final String DELETE_BATCH = """
            DELETE FROM processed_events
             WHERE ctid = ANY (ARRAY(SELECT ctid FROM processed_events WHERE processed_at < ? LIMIT ?))""";

    private static final Logger LOG = Logger.getLogger(Retention.class.getName());

    @Resource(lookup = Resources.DATA_SOURCE)
    DataSource dataSource;

    @Inject
    Config config;

    @Inject
    MetricRegistry metrics;

    private Counter purgedRows;
    private volatile PurgeRun lastRun;

    @PostConstruct
    void registerMetrics() {
        purgedRows = metrics.counter("retention.purged.rows");
        metrics.gauge(
                "retention.last.run.started",
                this,
                r -> r.last(run -> run.startedAt().getEpochSecond()));
        metrics.gauge(
                "retention.last.run.duration.seconds",
                this,
                r -> r.last(run -> run.duration().toMillis() / 1000.0));
        metrics.gauge(
                "retention.oldest.row.age.seconds",
                this,
                r -> r.last(run -> run.oldestRemainingAge() == null
                        ? 0
                        : run.oldestRemainingAge().toSeconds()));
    }

    public RetentionPolicy policy() {
        return new RetentionPolicy(
                Duration.ofDays(config.getValue(RetentionPolicy.WINDOW_DAYS, Integer.class)),
                config.getValue(RetentionPolicy.BATCH_SIZE, Integer.class),
                Duration.ofSeconds(config.getValue(RetentionPolicy.TIME_BUDGET_SECONDS, Integer.class)),
                config.getValue(RetentionPolicy.DUTY_CYCLE_PERCENT, Integer.class),
                config.getValue(RetentionPolicy.SCHEDULE, String.class),
                config.getValue(RetentionPolicy.MAX_DELIVERY_ATTEMPTS, Integer.class),
                Duration.ofSeconds(config.getValue(RetentionPolicy.MAX_REDELIVERY_DELAY_SECONDS, Integer.class)),
                Duration.ofDays(config.getValue(RetentionPolicy.DLQ_REPLAY_DAYS, Integer.class)));
    }

    /** RETENTION_SCHEDULE as configured now; read on its own so that a bad value elsewhere cannot stop the timer. */
    public String schedule() {
        return config.getValue(RetentionPolicy.SCHEDULE, String.class);
    }

    public PurgeRun lastRun() {
        return lastRun;
    }

    public PurgeRun purge() {
        Instant started = Instant.now();
        RetentionPolicy policy;
        try {
            policy = policy().requireSafe();
        } catch (UnsafeRetention | IllegalArgumentException e) {
            LOG.log(Level.SEVERE, "{0}. Nothing purged.", e.getMessage());
            return record(PurgeRun.withoutWork(Outcome.REFUSED, started, e.getMessage()));
        }
        try (Connection connection = dataSource.getConnection()) {
            // Autocommit: every DELETE below is a transaction of its own; the session lock spans them all.
            connection.setAutoCommit(true);
            if (!tryLock(connection)) {
                LOG.log(Level.FINE, "Purge skipped: another instance holds the retention lock");
                return record(PurgeRun.withoutWork(Outcome.SKIPPED_LOCKED, started, "another purge is running"));
            }
            try {
                return record(purgeLocked(connection, policy, started));
            } finally {
                unlock(connection);
            }
        } catch (SQLException e) {
            LOG.log(Level.WARNING, "Purge failed: {0}", e.getMessage());
            return record(PurgeRun.withoutWork(Outcome.FAILED, started, e.getMessage()));
        }
    }

    private PurgeRun purgeLocked(Connection connection, RetentionPolicy policy, Instant started) throws SQLException {
        Timestamp cutoff = cutoff(connection, policy.window());
        long deadline = System.nanoTime() + policy.timeBudget().toNanos();
        long deleted = 0;
        int batches = 0;
        Outcome outcome = Outcome.COMPLETED;
        try (PreparedStatement delete = connection.prepareStatement(DELETE_BATCH)) {
            delete.setTimestamp(1, cutoff);
            delete.setInt(2, policy.batchSize());
            while (true) {
                long batchStarted = System.nanoTime();
                int rows = delete.executeUpdate();
                batches++;
                deleted += rows;
                purgedRows.inc(rows);
                if (rows < policy.batchSize()) {
                    break;
                }
                rest(policy.pauseAfter(Duration.ofNanos(System.nanoTime() - batchStarted)));
                if (System.nanoTime() > deadline) {
                    outcome = Outcome.BUDGET_SPENT;
                    break;
                }
            }
        }
        PurgeRun run = new PurgeRun(
                outcome,
                started,
                Duration.between(started, Instant.now()),
                cutoff.toInstant(),
                deleted,
                batches,
                oldestAge(connection),
                null);
        LOG.log(
                Level.INFO,
                "Purge {0}: {1,number,#} rows deleted in {2,number,#} batches, {3,number,#} ms, cutoff {4}, oldest remaining {5}",
                new Object[] {
                    outcome, deleted, batches, run.duration().toMillis(), run.cutoff(), run.oldestRemainingAge()
                });
        return run;
    }

    /** Between two batches; an interrupted purge stops at the next batch's end, as a shut-down server wants. */
    private static void rest(Duration pause) {
        try {
            Thread.sleep(pause.toMillis(), pause.toNanosPart() % 1_000_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("purge interrupted", e);
        }
    }

    private PurgeRun record(PurgeRun run) {
        if (run.outcome() != Outcome.SKIPPED_LOCKED) {
            lastRun = run;
        }
        return run;
    }

    /** A gauge of the last run; 0 before the first one. */
    private Number last(Function<PurgeRun, Number> value) {
        PurgeRun run = lastRun;
        return run == null ? 0 : value.apply(run);
    }

    private static boolean tryLock(Connection connection) throws SQLException {
        try (PreparedStatement lock = connection.prepareStatement("SELECT pg_try_advisory_lock(?)")) {
            lock.setLong(1, LOCK_KEY);
            try (ResultSet row = lock.executeQuery()) {
                return row.next() && row.getBoolean(1);
            }
        }
    }

    private static void unlock(Connection connection) throws SQLException {
        try (PreparedStatement unlock = connection.prepareStatement("SELECT pg_advisory_unlock(?)")) {
            unlock.setLong(1, LOCK_KEY);
            unlock.execute();
        }
    }

    /** The database's clock decides, as it does for processed_at. */
    private static Timestamp cutoff(Connection connection, Duration window) throws SQLException {
        try (PreparedStatement query = connection.prepareStatement("SELECT now() - make_interval(secs => ?)")) {
            query.setDouble(1, window.toSeconds());
            try (ResultSet row = query.executeQuery()) {
                row.next();
                return row.getTimestamp(1);
            }
        }
    }

    private static Duration oldestAge(Connection connection) throws SQLException {
        try (PreparedStatement query = connection.prepareStatement(
                        "SELECT extract(epoch FROM now() - min(processed_at)) FROM processed_events");
                ResultSet row = query.executeQuery()) {
            row.next();
            double seconds = row.getDouble(1);
            return row.wasNull() ? null : Duration.ofMillis((long) (seconds * 1000));
        }
    }
}
