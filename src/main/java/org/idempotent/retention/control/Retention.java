package org.idempotent.retention.control;

import jakarta.annotation.PostConstruct;
import jakarta.annotation.Resource;
import jakarta.ejb.Lock;
import jakarta.ejb.LockType;
import jakarta.ejb.Singleton;
import jakarta.ejb.Startup;
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
import java.util.List;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.eclipse.microprofile.metrics.Counter;
import org.eclipse.microprofile.metrics.MetricRegistry;
import org.idempotent.Resources;
import org.idempotent.postgres.AdvisoryLock;
import org.idempotent.postgres.BatchedDelete;
import org.idempotent.retention.entity.PurgeRun;
import org.idempotent.retention.entity.PurgeRun.Result;
import org.idempotent.retention.entity.RetentionPolicy;
import org.idempotent.retention.entity.UnsafeRetention;
import org.idempotent.schema.boundary.SchemaMigration;

/**
 * Deletes processed_events rows older than the retention window: in batches, each its own short transaction, so that
 * no long lock stalls the consumers; under a PostgreSQL advisory lock, so that one instance purges at a time however
 * many share the database ({@link AdvisoryLock}, {@link BatchedDelete}). The configuration is read, and checked, on
 * every run.
 *
 * <p>Created at deployment ({@code @Startup}), not at the timer's first call, so that its metrics are exported from the
 * start: a dashboard and the overdue alert read {@code retention_last_success_timestamp_seconds} as 0 until a purge.
 */
@Singleton
@Startup
@Lock(LockType.READ)
@TransactionManagement(TransactionManagementType.BEAN)
public class Retention {

    /** Advisory lock key of the purge ("retentio" in ASCII), the same on every instance. */
    public static final long LOCK_KEY = 0x726574656e74696fL;

    private static final Logger LOG = Logger.getLogger(Retention.class.getName());

    @Resource(lookup = Resources.DATA_SOURCE)
    DataSource dataSource;

    @Inject
    RetentionSettings settings;

    @Inject
    DedupTableGauges table;

    @Inject
    MetricRegistry metrics;

    @Inject
    SchemaMigration schema;

    private Counter purgedRows;
    private volatile PurgeRun lastRun;
    /** When the last run that purged everything it could ended: the figure a retention alert watches. */
    private volatile Instant lastSuccess;

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
                "retention.last.success.timestamp.seconds",
                this,
                r -> r.lastSuccess == null ? 0 : r.lastSuccess.getEpochSecond());
        metrics.gauge(
                "retention.oldest.row.age.seconds",
                this,
                r -> r.last(run -> run.oldestRemainingAge() == null
                        ? 0
                        : run.oldestRemainingAge().toSeconds()));
    }

    public PurgeRun lastRun() {
        return lastRun;
    }

    public PurgeRun purge() {
        Instant started = Instant.now();
        RetentionPolicy policy;
        try {
            policy = settings.policy().requireSafe();
        } catch (UnsafeRetention | IllegalArgumentException e) {
            LOG.log(Level.SEVERE, "{0}. Nothing purged.", e.getMessage());
            return record(PurgeRun.withoutWork(Result.REFUSED, started, e.getMessage()));
        }
        try (Connection connection = dataSource.getConnection()) {
            // Autocommit: every DELETE below is a transaction of its own; the session lock spans them all.
            connection.setAutoCommit(true);
            return record(AdvisoryLock.whileHeld(connection, LOCK_KEY, () -> purgeLocked(connection, policy, started))
                    .orElseGet(() -> {
                        LOG.log(Level.FINE, "Purge skipped: another instance holds the retention lock");
                        return PurgeRun.withoutWork(Result.SKIPPED_LOCKED, started, "another purge is running");
                    }));
        } catch (SQLException e) {
            LOG.log(Level.WARNING, "Purge failed: {0}", e.getMessage());
            return record(PurgeRun.withoutWork(Result.FAILED, started, e.getMessage()));
        }
    }

    private PurgeRun purgeLocked(Connection connection, RetentionPolicy policy, Instant started) throws SQLException {
        Timestamp cutoff = cutoff(connection, policy.window());
        long rowsDeleted = 0;
        int batches = 0;
        boolean complete = true;
        List<String> tables = List.of("processed_events");
        PurgePacing pacing = PurgePacing.of(policy);
        switch (schema.dedupLayout()) {
            case ID -> {
                DayPartitions.Dropped dropped = DayPartitions.purge(connection, policy.window(), pacing);
                purgedRows.inc(dropped.rows());
                rowsDeleted += dropped.rows();
                batches += dropped.days();
                // The days left go first: the rows of the default sub-partition and of other versions wait for them.
                tables = dropped.complete() ? DayPartitions.ROW_BY_ROW : List.of();
                complete = dropped.complete();
            }
            case NONE -> {
                // one table, row by row
            }
        }
        for (String table : tables) {
            BatchedDelete.Result deleted = deleteExpired(connection, table, cutoff, policy.batchSize(), pacing);
            rowsDeleted += deleted.deleted();
            batches += deleted.batches();
            if (!deleted.complete()) {
                complete = false;
                break;
            }
        }
        PurgeRun run = new PurgeRun(
                complete ? Result.COMPLETED : Result.BUDGET_SPENT,
                started,
                Duration.between(started, Instant.now()),
                cutoff.toInstant(),
                rowsDeleted,
                batches,
                oldestRemaining(),
                null);
        PurgeLog.ended(run, policy);
        return run;
    }

    private BatchedDelete.Result deleteExpired(
            Connection connection, String table, Timestamp cutoff, int sliceSize, BatchedDelete.Pacing pacing)
            throws SQLException {
        try (ExpiredRows rows = new ExpiredRows(connection, table, cutoff, sliceSize)) {
            return BatchedDelete.run(
                    () -> {
                        BatchedDelete.Slice slice = rows.delete();
                        purgedRows.inc(slice.rows());
                        return slice;
                    },
                    sliceSize,
                    pacing);
        }
    }

    private PurgeRun record(PurgeRun run) {
        if (run.outcome() != Result.SKIPPED_LOCKED) {
            lastRun = run;
        }
        if (run.outcome() == Result.COMPLETED) {
            // Only a run that left nothing expired: runs that keep spending their budget are retention falling
            // behind, which RetentionOverdue must see, however much each of them deleted.
            lastSuccess = run.startedAt().plus(run.duration());
        }
        return run;
    }

    /** A gauge of the last run; 0 before the first one. */
    private Number last(Function<PurgeRun, Number> value) {
        PurgeRun run = lastRun;
        return run == null ? 0 : value.apply(run);
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

    /** Null if the table is empty or the database did not answer. */
    private Duration oldestRemaining() {
        Double seconds = table.measureNow().oldestRowAgeSeconds();
        return seconds == null ? null : Duration.ofMillis((long) (seconds * 1000));
    }
}
