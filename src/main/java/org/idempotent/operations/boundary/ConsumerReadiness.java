package org.idempotent.operations.boundary;

import jakarta.annotation.PostConstruct;
import jakarta.annotation.Resource;
import jakarta.ejb.EJB;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Startup;
import jakarta.inject.Inject;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSContext;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;
import org.eclipse.microprofile.metrics.MetricRegistry;
import org.idempotent.Resources;
import org.idempotent.delivery.control.DatabaseBreaker;
import org.idempotent.operations.control.DevelopmentPasswords;
import org.idempotent.operations.control.InboundSessions;
import org.idempotent.schema.boundary.SchemaMigration;

/**
 * Ready when the schema is migrated, both the database and the broker answer, every session of the consumers is
 * attached to the broker, and the database breaker is closed (consumption is not held back): /health/ready. The
 * answer is kept for a moment: a check takes a pool connection of each kind, and a flood of probes must not take the
 * consumer's. It names states, never an exception's text (which
 * can hold hosts, users or SQL); the server log has the details.
 */
@Readiness
@ApplicationScoped
public class ConsumerReadiness implements HealthCheck {

    private static final String NAME = "payment-consumer";
    /** The same answer as a gauge, 1 or 0: an alert sees readiness where Prometheus scrapes, not only a probe. */
    static final String READY_GAUGE = "payments.consumer.ready";

    private static final int DATABASE_TIMEOUT_SECONDS = 2;
    /** How long one answer serves every probe. */
    static final Duration CACHED_FOR = Duration.ofSeconds(2);

    private static final Logger LOG = Logger.getLogger(ConsumerReadiness.class.getName());

    private record Answer(long at, HealthCheckResponse response) {}

    private final ReentrantLock checking = new ReentrantLock();
    private volatile Answer last;

    @EJB
    SchemaMigration schema;

    @Resource(lookup = Resources.DATA_SOURCE)
    DataSource dataSource;

    @Resource(lookup = Resources.CONNECTION_FACTORY)
    ConnectionFactory connectionFactory;

    @Inject
    DatabaseBreaker breaker;

    @Inject
    DevelopmentPasswords developmentPasswords;

    @Inject
    InboundSessions inboundSessions;

    @Inject
    MetricRegistry metrics;

    @PostConstruct
    void registerGauge() {
        metrics.gauge(
                READY_GAUGE, this, readiness -> readiness.call().getStatus() == HealthCheckResponse.Status.UP ? 1 : 0);
    }

    /** At deployment, so that the gauge is there before the first probe. */
    void registerAtStartup(@Observes Startup startup) {
        // the work is done by the @PostConstruct method
    }

    @Override
    public HealthCheckResponse call() {
        Answer answer = last;
        if (answer != null && System.nanoTime() - answer.at() < CACHED_FOR.toNanos()) {
            return answer.response();
        }
        // One probe checks; the others meanwhile get the previous answer, or DOWN before there is one: a probe never
        // waits for another's check (which can take the pools' wait times), nor holds an HTTP thread for it.
        if (!checking.tryLock()) {
            return answer != null
                    ? answer.response()
                    : HealthCheckResponse.named(NAME)
                            .withData("check", "in progress")
                            .down()
                            .build();
        }
        try {
            HealthCheckResponse response = check();
            last = new Answer(System.nanoTime(), response);
            return response;
        } finally {
            checking.unlock();
        }
    }

    private HealthCheckResponse check() {
        HealthCheckResponseBuilder response = HealthCheckResponse.named(NAME);
        boolean up = true;
        String version = schema.awaitMigrated();
        response.withData("schemaVersion", String.valueOf(version));
        up &= version != null;
        try (Connection connection = dataSource.getConnection()) {
            boolean valid = connection.isValid(DATABASE_TIMEOUT_SECONDS);
            response.withData("database", valid ? "UP" : "DOWN");
            up &= valid;
        } catch (SQLException e) {
            LOG.log(Level.WARNING, "Readiness: the database does not answer: {0}", e.toString());
            response.withData("database", "DOWN: SQLState " + e.getSQLState());
            up = false;
        }
        if (breaker.isOpen()) {
            // Consumption is held back until the breaker's own probe succeeds, whatever the check above saw.
            response.withData(
                    "databaseBreaker",
                    "OPEN for " + breaker.openFor().map(Duration::toSeconds).orElse(0L) + " s");
            up = false;
        }
        List<String> defaults = developmentPasswords.inForce();
        if (!defaults.isEmpty()) {
            response.withData(
                    "passwords",
                    "DOWN: development default in force for " + String.join(", ", defaults)
                            + "; set " + (defaults.size() == 1 ? "it" : "them")
                            + " (server-config/configuration.properties) or declare "
                            + DevelopmentPasswords.DEVELOPMENT + "=true");
            up = false;
        }
        try (JMSContext jms = connectionFactory.createContext()) {
            response.withData("broker", "UP");
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "Readiness: the broker does not answer: {0}", e.toString());
            response.withData("broker", "DOWN: " + e.getClass().getSimpleName());
            up = false;
        }
        // The outbound connection above proves the broker answers, not that the MDBs consume: after a broker restart
        // their sessions come back one by one, and an activation the adapter sets up again has none for seconds.
        InboundSessions.Reading sessions = inboundSessions.read();
        if (sessions.unreadable() != null) {
            LOG.log(
                    Level.WARNING,
                    "Readiness: the resource adapter's sessions cannot be read: {0}",
                    sessions.unreadable());
            response.withData("consumerSessions", "DOWN: the resource adapter's sessions cannot be read");
        } else {
            response.withData(
                    "consumerSessions",
                    (sessions.attached() ? "UP: " : "DOWN: ")
                            + sessions.queues().stream().map(Object::toString).collect(Collectors.joining(", ")));
        }
        up &= sessions.attached();
        return response.status(up).build();
    }
}
