package org.idempotent.operations.control;

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
import java.util.logging.Level;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.eclipse.microprofile.metrics.MetricRegistry;
import org.idempotent.Resources;

/**
 * How long the application's longest commit has been waiting for a synchronous standby to confirm it
 * ({@code payments_database_commit_wait_seconds}; PostgreSQL's wait event SyncRep, of this role's sessions). With
 * synchronous_commit on and the standby gone, every commit waits, for as long as it is gone: nothing fails, so the
 * breaker stays closed, and the database answers reads, so readiness stays UP. A healthy standby confirms in
 * milliseconds. Measured at most every {@link #FRESHNESS}; NaN while the database does not answer.
 */
@ApplicationScoped
public class CommitWaits {

    public static final String GAUGE = "payments.database.commit.wait.seconds";
    static final Duration FRESHNESS = Duration.ofSeconds(5);

    /** A session of the same role shows its wait event and its statement's start to this one. */
    static final String LONGEST_WAIT = """
            SELECT coalesce(max(extract(epoch FROM clock_timestamp() - query_start)), 0)
              FROM pg_stat_activity
             WHERE usename = current_user AND wait_event = 'SyncRep'""";

    private static final int QUERY_TIMEOUT_SECONDS = 2;
    private static final Logger LOG = Logger.getLogger(CommitWaits.class.getName());

    @Resource(lookup = Resources.DATA_SOURCE)
    DataSource dataSource;

    @Inject
    MetricRegistry registry;

    private volatile double last;
    private volatile long measuredAt;

    /** At deployment, in the application's context, where the data source can be injected. */
    void registerGauge(@Observes Startup startup) {
        last = measure();
        measuredAt = System.nanoTime();
        registry.gauge(GAUGE, this, CommitWaits::longestSeconds);
    }

    public synchronized double longestSeconds() {
        if (System.nanoTime() - measuredAt > FRESHNESS.toNanos()) {
            last = measure();
            measuredAt = System.nanoTime();
        }
        return last;
    }

    private double measure() {
        try (Connection connection = dataSource.getConnection();
                PreparedStatement query = connection.prepareStatement(LONGEST_WAIT)) {
            query.setQueryTimeout(QUERY_TIMEOUT_SECONDS);
            try (ResultSet row = query.executeQuery()) {
                row.next();
                return row.getDouble(1);
            }
        } catch (SQLException e) {
            LOG.log(Level.FINE, "Commit waits not measured: {0}", e.getMessage());
            return Double.NaN;
        }
    }
}
