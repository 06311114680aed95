package org.idempotent.payment.control;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

class DatabaseBreakerTest {

    @Test
    void aProbeAnsweredByAStandbyFailsAndEvictsItsConnection() {
        PoolOf pool = new PoolOf(true);
        DatabaseBreaker breaker = new DatabaseBreaker();
        breaker.dataSource = pool;

        assertThat(breaker.probe()).hasValue("a standby answered, not the primary");
        assertThat(pool.evicted)
                .as("the standby's connection, told to the pool as bad")
                .hasSize(1);
    }

    @Test
    void aProbeAnsweredByThePrimarySucceedsAndKeepsItsConnection() {
        PoolOf pool = new PoolOf(false);
        DatabaseBreaker breaker = new DatabaseBreaker();
        breaker.dataSource = pool;

        assertThat(breaker.probe()).isEmpty();
        assertThat(pool.evicted).isEmpty();
    }

    /**
     * A pool whose connections answer the probe with {@code inRecovery}, and that records what it is told is bad
     * (the method Payara's DataSource offers, which the breaker reaches by reflection).
     */
    public static final class PoolOf implements DataSource {

        private final boolean inRecovery;
        final List<Connection> evicted = new ArrayList<>();

        PoolOf(boolean inRecovery) {
            this.inRecovery = inRecovery;
        }

        public void markConnectionAsBad(Connection connection) {
            evicted.add(connection);
        }

        @Override
        public Connection getConnection() {
            ResultSet row = proxy(ResultSet.class, (name, args) -> switch (name) {
                case "next" -> true;
                case "getBoolean" -> inRecovery;
                default -> null;
            });
            PreparedStatement statement =
                    proxy(PreparedStatement.class, (name, args) -> name.equals("executeQuery") ? row : null);
            return proxy(Connection.class, (name, args) -> name.equals("prepareStatement") ? statement : null);
        }

        @Override
        public Connection getConnection(String user, String password) {
            return getConnection();
        }

        @Override
        public PrintWriter getLogWriter() {
            return null;
        }

        @Override
        public void setLogWriter(PrintWriter out) {}

        @Override
        public void setLoginTimeout(int seconds) {}

        @Override
        public int getLoginTimeout() {
            return 0;
        }

        @Override
        public Logger getParentLogger() {
            return Logger.getGlobal();
        }

        @Override
        public <T> T unwrap(Class<T> type) {
            return null;
        }

        @Override
        public boolean isWrapperFor(Class<?> type) {
            return false;
        }
    }

    private interface Answer {
        Object answer(String method, Object[] args);
    }

    private static <T> T proxy(Class<T> type, Answer answer) {
        return type.cast(Proxy.newProxyInstance(
                type.getClassLoader(),
                new Class<?>[] {type},
                (self, method, args) ->
                        method.getName().equals("close") ? null : answer.answer(method.getName(), args)));
    }
}
