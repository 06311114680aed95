package org.idempotent.operations.boundary;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSContext;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.idempotent.delivery.control.DatabaseBreaker;
import org.idempotent.operations.control.DevelopmentPasswords;
import org.idempotent.operations.control.InboundSessions;
import org.idempotent.schema.boundary.SchemaMigration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class ConsumerReadinessTest {

    private final AtomicInteger connectionsTaken = new AtomicInteger();

    @BeforeAll
    static void healthResponses() {
        HealthCheckResponse.setResponseProvider(Builder::new);
    }

    @Test
    void aFloodOfProbesTakesOneConnectionOfEachKind() {
        ConsumerReadiness readiness = readiness(null);

        for (int probe = 0; probe < 500; probe++) {
            assertThat(readiness.call().getStatus()).isEqualTo(HealthCheckResponse.Status.UP);
        }

        assertThat(connectionsTaken).hasValue(2);
    }

    @Test
    void aFailureIsReportedAsItsStateWithoutTheExceptionsText() {
        SQLException refused = new SQLException(
                "FATAL: password authentication failed for user \"payments_app\" " + "at db.internal", "28P01");
        HealthCheckResponse response = readiness(refused).call();

        assertThat(response.getStatus()).isEqualTo(HealthCheckResponse.Status.DOWN);
        assertThat(response.getData())
                .hasValueSatisfying(data -> assertThat(data)
                        .containsEntry("database", "DOWN: SQLState 28P01")
                        .allSatisfy((key, value) ->
                                assertThat(String.valueOf(value)).doesNotContain("payments_app", "db.internal")));
    }

    @Test
    void sessionsNotAllAttachedAreDownNamingTheQueueThoughTheBrokerAnswers() {
        ConsumerReadiness readiness = readiness(null);
        readiness.inboundSessions =
                sessions(new InboundSessions.Queue("payments", 8, 8), new InboundSessions.Queue("refunds", 1, 2));

        HealthCheckResponse response = readiness.call();

        assertThat(response.getStatus()).isEqualTo(HealthCheckResponse.Status.DOWN);
        assertThat(response.getData())
                .hasValueSatisfying(data -> assertThat(data)
                        .containsEntry("broker", "UP")
                        .containsEntry("consumerSessions", "DOWN: payments 8/8, refunds 1/2"));
    }

    private static InboundSessions sessions(InboundSessions.Queue... queues) {
        return new InboundSessions() {
            @Override
            public Reading read() {
                return new Reading(List.of(queues), null);
            }
        };
    }

    private ConsumerReadiness readiness(SQLException databaseFailure) {
        ConsumerReadiness readiness = new ConsumerReadiness();
        readiness.inboundSessions =
                sessions(new InboundSessions.Queue("payments", 8, 8), new InboundSessions.Queue("refunds", 2, 2));
        readiness.schema = new SchemaMigration() {
            @Override
            public String awaitMigrated() {
                return "5";
            }
        };
        readiness.breaker = new DatabaseBreaker() {
            @Override
            public boolean isOpen() {
                return false;
            }
        };
        readiness.developmentPasswords = new DevelopmentPasswords() {
            @Override
            public List<String> inForce() {
                return List.of();
            }
        };
        readiness.dataSource = proxy(DataSource.class, (method, args) -> {
            connectionsTaken.incrementAndGet();
            if (databaseFailure != null) {
                throw databaseFailure;
            }
            return proxy(
                    Connection.class,
                    (connectionMethod, connectionArgs) -> connectionMethod.equals("isValid") ? Boolean.TRUE : null);
        });
        readiness.connectionFactory = proxy(ConnectionFactory.class, (method, args) -> {
            connectionsTaken.incrementAndGet();
            return proxy(JMSContext.class, (contextMethod, contextArgs) -> null);
        });
        return readiness;
    }

    private interface Answer {
        Object answer(String method, Object[] args) throws Exception;
    }

    private static <T> T proxy(Class<T> type, Answer answer) {
        return type.cast(Proxy.newProxyInstance(
                type.getClassLoader(),
                new Class<?>[] {type},
                (self, method, args) -> answer.answer(method.getName(), args)));
    }

    /** The smallest response builder: MicroProfile Health leaves it to the server. */
    private static final class Builder extends HealthCheckResponseBuilder {

        private String name;
        private boolean up;
        private final Map<String, Object> data = new LinkedHashMap<>();

        @Override
        public HealthCheckResponseBuilder name(String name) {
            this.name = name;
            return this;
        }

        @Override
        public HealthCheckResponseBuilder withData(String key, String value) {
            data.put(key, value);
            return this;
        }

        @Override
        public HealthCheckResponseBuilder withData(String key, long value) {
            data.put(key, value);
            return this;
        }

        @Override
        public HealthCheckResponseBuilder withData(String key, boolean value) {
            data.put(key, value);
            return this;
        }

        @Override
        public HealthCheckResponseBuilder up() {
            return status(true);
        }

        @Override
        public HealthCheckResponseBuilder down() {
            return status(false);
        }

        @Override
        public HealthCheckResponseBuilder status(boolean up) {
            this.up = up;
            return this;
        }

        @Override
        public HealthCheckResponse build() {
            return new HealthCheckResponse(
                    name,
                    up ? HealthCheckResponse.Status.UP : HealthCheckResponse.Status.DOWN,
                    Optional.of(Map.copyOf(data)));
        }
    }
}
