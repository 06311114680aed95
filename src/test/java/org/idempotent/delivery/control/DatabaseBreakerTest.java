package org.idempotent.delivery.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import jakarta.persistence.PersistenceException;
import java.io.PrintWriter;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.idempotent.delivery.entity.RejectedMessage;
import org.idempotent.delivery.entity.Rejection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A breaker that never closes blocks its caller: each test is interrupted after 10 s and fails. */
@Timeout(10)
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

    @Test
    void aProbeFindingACommitWaitingForTheStandbyFailsAndKeepsItsConnection() {
        PoolOf pool = new PoolOf(false);
        pool.commitWaitSeconds = 2.5;
        DatabaseBreaker breaker = new DatabaseBreaker();
        breaker.dataSource = pool;

        assertThat(breaker.probe()).hasValue("a commit has waited 2.5 s for the synchronous standby");
        assertThat(pool.evicted).as("a primary's connection, which is sound").isEmpty();

        pool.commitWaitSeconds = 0.01;
        assertThat(breaker.probe()).as("a standby confirming in milliseconds").isEmpty();
    }

    @Test
    void aFailedDeliveryWhoseProbeIsAnsweredLeavesItClosed() {
        PoolOf pool = new PoolOf(false);
        DatabaseBreaker breaker = breaker(pool);

        breaker.failed();
        assertThat(breaker.isOpen()).as("open after the failure").isFalse();
        breaker.awaitClosed();
        assertThat(pool.probes()).as("probes: the failure's own").isEqualTo(1);
    }

    @Test
    void anUnansweredProbeHoldsEveryDeliveryUntilAProbeIsAnswered() throws Exception {
        PoolOf pool = new PoolOf(false);
        pool.refuse(Integer.MAX_VALUE);
        DatabaseBreaker breaker = breaker(pool);
        breaker.failed();
        assertThat(breaker.isOpen()).as("open after the failure").isTrue();

        ExecutorService sessions = Executors.newFixedThreadPool(4);
        AtomicInteger through = new AtomicInteger();
        try {
            for (int i = 0; i < 4; i++) {
                sessions.submit(() -> {
                    breaker.awaitClosed();
                    through.incrementAndGet();
                });
            }
            await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> through.get() == 0);
            assertThat(pool.probes()).as("probes while the database was away").isGreaterThan(3);
            assertThat(pool.mostAtOnce()).as("probes at the same moment").isEqualTo(1);

            pool.refuse(0);
            await().atMost(Duration.ofSeconds(2)).until(() -> through.get() == 4);
            assertThat(breaker.isOpen()).isFalse();
            assertThat(breaker.openFor()).isEmpty();
        } finally {
            sessions.shutdownNow();
        }
    }

    @Test
    void itProbesLessOftenTheLongerTheDatabaseIsAwayUpToItsCap() {
        PoolOf pool = new PoolOf(false);
        DatabaseBreaker breaker = breaker(pool);
        List<Duration> backoffs = Collections.synchronizedList(new ArrayList<>());
        pool.onConnect = () -> backoffs.add(breaker.backoff());
        pool.refuse(7);

        breaker.failed();
        assertThat(breaker.isOpen()).as("open after the failure").isTrue();
        breaker.awaitClosed();

        List<Duration> whileOpen = backoffs.subList(1, backoffs.size());
        assertThat(whileOpen)
                .as("the wait before each probe while open")
                .containsExactly(ms(10), ms(20), ms(40), ms(40), ms(40), ms(40), ms(40));
        for (int probe = 1; probe < pool.probedAt.size(); probe++) {
            assertThat(pool.probedAt.get(probe) - pool.probedAt.get(probe - 1))
                    .as("nanoseconds between probes %d and %d", probe - 1, probe)
                    .isGreaterThanOrEqualTo(backoffs.get(probe).toNanos());
        }
        assertThat(breaker.isOpen()).isFalse();
    }

    @Test
    void openedAgainItStartsItsBackOffFromTheFirstStep() {
        PoolOf pool = new PoolOf(false);
        DatabaseBreaker breaker = breaker(pool);
        List<Duration> backoffs = Collections.synchronizedList(new ArrayList<>());
        pool.onConnect = () -> backoffs.add(breaker.backoff());
        pool.refuse(4);
        breaker.failed();
        breaker.awaitClosed();
        assertThat(backoffs.subList(1, backoffs.size()))
                .as("the first opening, up to its cap")
                .containsExactly(ms(10), ms(20), ms(40), ms(40));

        backoffs.clear();
        pool.refuse(2);
        breaker.failed();
        assertThat(breaker.isOpen()).as("open again").isTrue();
        breaker.awaitClosed();

        assertThat(backoffs.subList(1, backoffs.size()))
                .as("the wait before each probe of the second opening")
                .containsExactly(ms(10), ms(20));
    }

    /** failures.md and operations.md: the first probe a quarter of a second after opening, then doubling up to 5 s. */
    @Test
    void asShippedItProbesAQuarterSecondAfterOpeningAndAtLeastEveryFiveSeconds() {
        PoolOf pool = new PoolOf(false);
        DatabaseBreaker shipped = new DatabaseBreaker();
        shipped.dataSource = pool;
        shipped.metrics = new DeliveryMetrics();
        List<Duration> backoffs = Collections.synchronizedList(new ArrayList<>());
        pool.onConnect = () -> backoffs.add(shipped.backoff());
        pool.refuse(1);

        shipped.failed();
        shipped.awaitClosed();

        assertThat(backoffs.subList(1, backoffs.size()))
                .as("the wait before the first probe while open")
                .containsExactly(ms(250));
        assertThat(pool.probedAt.get(1) - pool.probedAt.get(0))
                .as("nanoseconds from the opening probe to the next")
                .isGreaterThanOrEqualTo(ms(250).toNanos());
        assertThat(shipped.maxBackoff).as("the cap of the wait between probes").isEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void aRefusedStatementIsARejectionWithoutAProbeEvenWhileOpen() {
        PoolOf pool = new PoolOf(false);
        pool.refuse(Integer.MAX_VALUE);
        DatabaseBreaker breaker = breaker(pool);
        breaker.failed();
        int probes = pool.probes();

        RuntimeException thrown = breaker.failed(
                new PersistenceException("flush failed", new SQLException("numeric field overflow", "22003")));
        RejectedMessage rejected = new RejectedMessage(Rejection.Reason.EMPTY_BODY, "nothing to read");

        assertThat(thrown).isInstanceOf(RejectedMessage.class);
        assertThat(((RejectedMessage) thrown).rejection().reason()).isEqualTo(Rejection.Reason.AMOUNT_OUT_OF_RANGE);
        assertThat(breaker.failed(rejected)).isSameAs(rejected);
        assertThat(pool.probes()).as("probes after the first").isEqualTo(probes);
        assertThat(breaker.isOpen())
                .as("still open: a rejection says nothing of the database")
                .isTrue();
    }

    @Test
    void aTransientFailureIsRethrownAndOpensOnlyWhenTheProbeIsUnanswered() {
        PoolOf pool = new PoolOf(false);
        DatabaseBreaker breaker = breaker(pool);
        var lostConnection = new PersistenceException("flush failed", new SQLException("I/O error", "08006"));

        assertThat(breaker.failed(lostConnection)).isSameAs(lostConnection);
        assertThat(breaker.isOpen()).as("open with the database answering").isFalse();

        pool.refuse(Integer.MAX_VALUE);
        assertThat(breaker.failed(lostConnection)).isSameAs(lostConnection);
        assertThat(breaker.isOpen()).as("open with the database away").isTrue();
    }

    private static DatabaseBreaker breaker(PoolOf pool) {
        DatabaseBreaker breaker = new DatabaseBreaker();
        breaker.dataSource = pool;
        breaker.metrics = new DeliveryMetrics();
        breaker.firstBackoff = ms(10);
        breaker.maxBackoff = ms(40);
        return breaker;
    }

    private static Duration ms(long millis) {
        return Duration.ofMillis(millis);
    }

    /**
     * A pool whose connections answer the probe with {@code inRecovery}, and that records what it is told is bad
     * (the method Payara's DataSource offers, which the breaker reaches by reflection).
     */
    public static final class PoolOf implements DataSource {

        private final boolean inRecovery;
        /** How long the longest commit has waited for the synchronous standby, in seconds, as the probe reads it. */
        volatile double commitWaitSeconds;

        final List<Connection> evicted = new ArrayList<>();
        /** System.nanoTime() of every connection asked for: every probe. */
        final List<Long> probedAt = Collections.synchronizedList(new ArrayList<>());
        /** Runs as a connection is asked for. */
        Runnable onConnect = () -> {};

        private final AtomicInteger refusals = new AtomicInteger();
        private final AtomicInteger connecting = new AtomicInteger();
        private final AtomicInteger mostAtOnce = new AtomicInteger();

        PoolOf(boolean inRecovery) {
            this.inRecovery = inRecovery;
        }

        public void markConnectionAsBad(Connection connection) {
            evicted.add(connection);
        }

        /** Refuses the next {@code connections} as PostgreSQL's absence does. */
        void refuse(int connections) {
            refusals.set(connections);
        }

        int probes() {
            return probedAt.size();
        }

        int mostAtOnce() {
            return mostAtOnce.get();
        }

        @Override
        public Connection getConnection() throws SQLException {
            probedAt.add(System.nanoTime());
            onConnect.run();
            mostAtOnce.accumulateAndGet(connecting.incrementAndGet(), Math::max);
            try {
                // Long enough for a second probe to overlap this one if the breaker let it.
                Thread.sleep(2);
                if (refusals.getAndUpdate(left -> Math.max(0, left - 1)) > 0) {
                    throw new SQLException("Connection to 127.0.0.1:5432 refused", "08001");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SQLException("interrupted", e);
            } finally {
                connecting.decrementAndGet();
            }
            ResultSet row = proxy(ResultSet.class, (name, args) -> switch (name) {
                case "next" -> true;
                case "getBoolean" -> inRecovery;
                case "getDouble" -> commitWaitSeconds;
                default -> null;
            });
            PreparedStatement statement =
                    proxy(PreparedStatement.class, (name, args) -> name.equals("executeQuery") ? row : null);
            return proxy(Connection.class, (name, args) -> name.equals("prepareStatement") ? statement : null);
        }

        @Override
        public Connection getConnection(String user, String password) throws SQLException {
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
