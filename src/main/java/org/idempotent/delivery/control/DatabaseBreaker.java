package org.idempotent.delivery.control;

import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Startup;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Level;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.eclipse.microprofile.metrics.MetricRegistry;
import org.idempotent.Resources;
import org.idempotent.delivery.entity.RejectedMessage;

/**
 * Stops every session of this instance from taking work while PostgreSQL is unreachable, so that an outage longer
 * than the broker's redelivery budget does not dead-letter what arrived during it.
 *
 * <p>It opens only when a probe of the database itself fails (a connection and {@link #PROBE}, answered by a primary
 * whose commits are not stuck behind a synchronous standby), never on a failed delivery alone: a failure whose probe
 * succeeds was about that message (a serialization failure, a broken pooled connection), is rolled back and
 * redelivered with the broker's backoff, and cannot stall the other sessions. While it is open, deliveries wait
 * before they start: not acknowledged, not counted as failed, not in progress for the liveness check. The waiting
 * sessions probe with backoff, one at a time, and the first success lets all of them go.
 */
@ApplicationScoped
public class DatabaseBreaker {

    public static final String OPEN = "payments.database.breaker.open";
    public static final String OPEN_SECONDS = "payments.database.breaker.open.seconds";

    /**
     * Whether the server is a standby, and how long the longest commit of this role has waited for a synchronous
     * standby: a primary whose standby is gone answers reads, but takes no commit.
     */
    static final String PROBE = """
            SELECT pg_is_in_recovery(),
                   (SELECT coalesce(max(extract(epoch FROM clock_timestamp() - query_start)), 0)
                      FROM pg_stat_activity WHERE usename = current_user AND wait_event = 'SyncRep')""";

    /**
     * A commit waiting longer than this for the synchronous standby means that commits do not complete: deliveries
     * then wait here instead of each spending one of its delivery attempts on a commit that times out (the pool's
     * socketTimeout) and leaves one more session waiting on the server. A healthy standby confirms in milliseconds.
     */
    static final Duration COMMIT_WAIT_LIMIT = Duration.ofSeconds(2);

    static final Duration FIRST_BACKOFF = Duration.ofMillis(250);
    static final Duration MAX_BACKOFF = Duration.ofSeconds(5);
    private static final int PROBE_TIMEOUT_SECONDS = 2;
    private static final Logger LOG = Logger.getLogger(DatabaseBreaker.class.getName());

    @Resource(lookup = Resources.DATA_SOURCE)
    DataSource dataSource;

    @Inject
    MetricRegistry registry;

    @Inject
    DeliveryMetrics metrics;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition closed = lock.newCondition();
    /** System.nanoTime() when it opened; 0 while closed. Read without the lock on every delivery. */
    private volatile long openedAt;

    /** The backoff's first step and its cap; a test shortens them. */
    Duration firstBackoff = FIRST_BACKOFF;

    Duration maxBackoff = MAX_BACKOFF;

    private long nextProbeAt;
    private Duration backoff = FIRST_BACKOFF;
    private boolean probing;

    /** At deployment, so that /metrics shows the breaker closed before the first failure. */
    void registerGauges(@Observes Startup startup) {
        registry.gauge(OPEN, this, breaker -> breaker.isOpen() ? 1 : 0);
        registry.gauge(
                OPEN_SECONDS,
                this,
                breaker -> breaker.openFor().map(Duration::toMillis).orElse(0L) / 1000.0);
    }

    public boolean isOpen() {
        return openedAt != 0;
    }

    /** How long it has been open; empty while closed. */
    public Optional<Duration> openFor() {
        long opened = openedAt;
        return opened == 0 ? Optional.empty() : Optional.of(Duration.ofNanos(System.nanoTime() - opened));
    }

    /** Returns at once while closed; while open, blocks until a probe succeeds. */
    public void awaitClosed() {
        if (!isOpen()) {
            return;
        }
        lock.lock();
        try {
            while (isOpen()) {
                long wait = nextProbeAt - System.nanoTime();
                if (probing || wait > 0) {
                    closed.await(probing ? maxBackoff.toNanos() : wait, TimeUnit.NANOSECONDS);
                    continue;
                }
                probing = true;
                lock.unlock();
                Optional<String> failure;
                try {
                    failure = probe();
                } finally {
                    lock.lock();
                    probing = false;
                }
                settle(failure);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the database", e);
        } finally {
            lock.unlock();
        }
    }

    /**
     * A payment's database work failed: counted by its class (DatabaseFailure); a refusal at commit (a deferred
     * constraint) is as permanent as a refused statement and becomes a {@link RejectedMessage}; a transient or
     * unclassified failure probes the database. Returns what to throw.
     */
    public RuntimeException failed(RuntimeException e) {
        if (e instanceof RejectedMessage rejected) {
            metrics.databaseFailure(DatabaseFailure.Kind.PERMANENT);
            return rejected;
        }
        DatabaseFailure failure = DatabaseFailure.of(e);
        metrics.databaseFailure(failure.kind());
        if (failure.kind() == DatabaseFailure.Kind.PERMANENT) {
            return new RejectedMessage(failure.rejection());
        }
        failed();
        return e;
    }

    /** A delivery failed in a way that may be the database's: probes it now, and opens if it does not answer. */
    void failed() {
        Optional<String> failure = probe();
        lock.lock();
        try {
            if (failure.isEmpty() || isOpen()) {
                return;
            }
            openedAt = System.nanoTime();
            backoff = firstBackoff;
            nextProbeAt = openedAt + backoff.toNanos();
            LOG.log(
                    Level.WARNING,
                    "The database does not answer ({0}): consumption waits until it does",
                    failure.get());
        } finally {
            lock.unlock();
        }
    }

    /** With the lock held: the outcome of a probe made while open. */
    private void settle(Optional<String> failure) {
        if (failure.isEmpty()) {
            LOG.log(
                    Level.WARNING,
                    "The database answers again after {0} s: consumption resumes",
                    openFor().map(Duration::toSeconds).orElse(0L));
            openedAt = 0;
            closed.signalAll();
            return;
        }
        backoff = backoff.multipliedBy(2).compareTo(maxBackoff) > 0 ? maxBackoff : backoff.multipliedBy(2);
        nextProbeAt = System.nanoTime() + backoff.toNanos();
        closed.signalAll(); // the others wait for the next probe time instead
        LOG.log(Level.FINE, "Database probe failed, next in {0} ms: {1}", new Object[] {
            backoff.toMillis(), failure.get()
        });
    }

    /** How long the waiting sessions wait before the next probe while it is open. */
    Duration backoff() {
        lock.lock();
        try {
            return backoff;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Empty if the primary answered; otherwise why not. A connection that failed the probe, or reached a standby, is
     * evicted.
     */
    Optional<String> probe() {
        try (Connection connection = dataSource.getConnection()) {
            try (PreparedStatement statement = connection.prepareStatement(PROBE)) {
                statement.setQueryTimeout(PROBE_TIMEOUT_SECONDS);
                try (ResultSet row = statement.executeQuery()) {
                    row.next();
                    if (row.getBoolean(1)) {
                        // A standby, or an old primary back as one: this connection must not carry a payment.
                        evict(connection);
                        return Optional.of("a standby answered, not the primary");
                    }
                    double commitWait = row.getDouble(2);
                    if (commitWait > COMMIT_WAIT_LIMIT.toSeconds()) {
                        return Optional.of(
                                String.format("a commit has waited %.1f s for the synchronous standby", commitWait));
                    }
                    return Optional.empty();
                }
            } catch (SQLException e) {
                evict(connection);
                return Optional.of(e.getMessage());
            }
        } catch (SQLException | RuntimeException e) {
            return Optional.of(String.valueOf(e.getMessage()));
        }
    }

    /**
     * Tells the pool not to hand {@code connection} out again, through Payara's
     * {@code com.sun.appserv.jdbc.DataSource#markConnectionAsBad}, reached by reflection because that interface is
     * not published as a library. Without it, the pool's own validation (at most every 10 s) finds the connection.
     */
    void evict(Connection connection) {
        try {
            dataSource
                    .getClass()
                    .getMethod("markConnectionAsBad", Connection.class)
                    .invoke(dataSource, connection);
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.log(Level.FINE, "Could not evict a failed connection; the pool's validation will: {0}", e.toString());
        }
    }
}
