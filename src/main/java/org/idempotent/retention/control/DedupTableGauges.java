package org.idempotent.retention.control;

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
import java.time.Instant;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.eclipse.microprofile.metrics.MetricRegistry;
import org.idempotent.Resources;

/**
 * The size of processed_events and the age of its oldest row, as gauges ({@code payments_processed_events_rows},
 * {@code payments_processed_events_oldest_age_seconds}). Measured at most every {@link #FRESHNESS}, however many
 * scrapers ask: both figures are cheap (the statistics views, and min() on the processed_at index), but not free. The
 * purge measures the oldest row it left with the same query ({@link #measureNow()}).
 */
@ApplicationScoped
public class DedupTableGauges {

    public static final String ROWS = "payments.processed.events.rows";
    public static final String OLDEST_AGE = "payments.processed.events.oldest.age.seconds";
    static final Duration FRESHNESS = Duration.ofSeconds(5);

    /**
     * n_live_tup: PostgreSQL's own running count of live rows, approximate but never a scan; of every partition when
     * the table is partitioned by ID (pg_partition_tree is empty for a table that is not).
     */
    static final String MEASURE = """
            SELECT (SELECT sum(n_live_tup)::bigint FROM pg_stat_user_tables
                     WHERE relid = 'processed_events'::regclass
                        OR relid IN (SELECT relid FROM pg_partition_tree('processed_events'))),
                   extract(epoch FROM now() - (SELECT min(processed_at) FROM processed_events))""";

    private static final int QUERY_TIMEOUT_SECONDS = 2;
    private static final Logger LOG = Logger.getLogger(DedupTableGauges.class.getName());

    /** A measurement; the figures are null when unknown (table empty, or the database did not answer: see error). */
    public record Measurement(Long approximateRows, Double oldestRowAgeSeconds, Instant measuredAt, String error) {}

    @Resource(lookup = Resources.DATA_SOURCE)
    DataSource dataSource;

    @Inject
    MetricRegistry registry;

    private volatile Measurement last;

    /** At deployment: observing Startup makes CDI create the bean then. */
    void registerGauges(@Observes Startup startup) {
        registry.gauge(ROWS, this, table -> figure(table, Measurement::approximateRows));
        registry.gauge(OLDEST_AGE, this, table -> figure(table, Measurement::oldestRowAgeSeconds));
    }

    /** Measured now, whatever the last measurement's age; the gauges then serve it. */
    public Measurement measureNow() {
        Measurement measurement = measure();
        last = measurement;
        return measurement;
    }

    public Measurement current() {
        Measurement measurement = last;
        if (measurement == null || measurement.measuredAt().plus(FRESHNESS).isBefore(Instant.now())) {
            synchronized (this) {
                measurement = last;
                if (measurement == null
                        || measurement.measuredAt().plus(FRESHNESS).isBefore(Instant.now())) {
                    measurement = measure();
                    last = measurement;
                }
            }
        }
        return measurement;
    }

    private Measurement measure() {
        try (Connection connection = dataSource.getConnection();
                PreparedStatement query = connection.prepareStatement(MEASURE)) {
            query.setQueryTimeout(QUERY_TIMEOUT_SECONDS);
            try (ResultSet row = query.executeQuery()) {
                row.next();
                long rows = row.getLong(1);
                Long approximateRows = row.wasNull() ? null : rows;
                double age = row.getDouble(2);
                return new Measurement(approximateRows, row.wasNull() ? null : age, Instant.now(), null);
            }
        } catch (SQLException e) {
            LOG.log(Level.FINE, "processed_events not measured: {0}", e.getMessage());
            return new Measurement(null, null, Instant.now(), e.getMessage());
        }
    }

    /** NaN when unknown: a gauge must answer a number, and NaN is Prometheus' "no value". */
    private static Number figure(DedupTableGauges table, Function<Measurement, Number> figure) {
        Number value = figure.apply(table.current());
        return value == null ? Double.NaN : value.doubleValue();
    }
}
