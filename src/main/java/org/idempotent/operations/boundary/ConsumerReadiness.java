package org.idempotent.operations.boundary;

import jakarta.annotation.Resource;
import jakarta.ejb.EJB;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.jms.ConnectionFactory;
import jakarta.inject.Inject;
import jakarta.jms.JMSContext;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import javax.sql.DataSource;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;
import org.idempotent.deadletter.control.DeadLetters;
import org.idempotent.payment.control.DatabaseBreaker;
import org.idempotent.schema.boundary.SchemaMigration;

/**
 * Ready when the schema is migrated, both the database and the broker answer, and the database breaker is closed
 * (consumption is not held back): /health/ready.
 */
@Readiness
@ApplicationScoped
public class ConsumerReadiness implements HealthCheck {

    private static final int DATABASE_TIMEOUT_SECONDS = 2;

    @EJB
    SchemaMigration schema;

    @Resource(lookup = SchemaMigration.DATA_SOURCE)
    DataSource dataSource;

    @Resource(lookup = DeadLetters.CONNECTION_FACTORY)
    ConnectionFactory connectionFactory;

    @Inject
    DatabaseBreaker breaker;

    @Override
    public HealthCheckResponse call() {
        HealthCheckResponseBuilder response = HealthCheckResponse.named("payment-consumer");
        boolean up = true;
        String version = schema.awaitMigrated();
        response.withData("schemaVersion", String.valueOf(version));
        up &= version != null;
        try (Connection connection = dataSource.getConnection()) {
            boolean valid = connection.isValid(DATABASE_TIMEOUT_SECONDS);
            response.withData("database", valid ? "UP" : "DOWN");
            up &= valid;
        } catch (SQLException e) {
            response.withData("database", "DOWN: " + e.getMessage());
            up = false;
        }
        if (breaker.isOpen()) {
            // Consumption is held back until the breaker's own probe succeeds, whatever the check above saw.
            response.withData("databaseBreaker", "OPEN for " + breaker.openFor().map(Duration::toSeconds).orElse(0L)
                    + " s: " + breaker.lastProbeFailure().orElse(""));
            up = false;
        }
        try (JMSContext jms = connectionFactory.createContext()) {
            response.withData("broker", "UP");
        } catch (RuntimeException e) {
            response.withData("broker", "DOWN: " + e.getMessage());
            up = false;
        }
        return response.status(up).build();
    }
}
