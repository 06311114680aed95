package org.idempotent.postgres;

import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;

/**
 * Retries a maintenance statement that waits only briefly for its lock (its own {@code lock_timeout}) and is refused
 * when a transaction in flight holds the table longer. A statement that locks a parent exclusively makes every insert
 * queue behind it while it waits, so it must wait little and often rather than long once: after each refusal
 * ({@value #LOCK_NOT_AVAILABLE}) a rest that doubles from {@link #FIRST_REST} up to {@link #LONGEST_REST}, each drawn
 * between half and one and a half times that, so that instances and retries do not fall into step with whatever holds
 * the table. Any other failure is thrown at once.
 */
public final class LockRetries {

    /** PostgreSQL's lock_not_available: lock_timeout ran out. */
    public static final String LOCK_NOT_AVAILABLE = "55P03";

    public static final int ATTEMPTS = 10;
    static final Duration FIRST_REST = Duration.ofMillis(100);
    static final Duration LONGEST_REST = Duration.ofSeconds(2);

    /** The statement. */
    @FunctionalInterface
    public interface Attempt<T> {
        T run() throws SQLException;
    }

    /** Rests between attempts; Thread::sleep but for tests. */
    @FunctionalInterface
    public interface Rest {
        void take(Duration pause) throws InterruptedException;
    }

    private LockRetries() {}

    /** @return what the statement answered; empty if its lock was refused {@link #ATTEMPTS} times */
    public static <T> Optional<T> attempt(Attempt<T> attempt) throws SQLException {
        return attempt(
                attempt,
                ATTEMPTS,
                pause -> Thread.sleep(pause.toMillis()),
                () -> ThreadLocalRandom.current().nextDouble(0.5, 1.5));
    }

    /** With the rest and the jitter (a factor between 0.5 and 1.5) given: for tests. */
    public static <T> Optional<T> attempt(Attempt<T> attempt, int attempts, Rest rest, DoubleSupplier jitter)
            throws SQLException {
        Duration base = FIRST_REST;
        for (int tried = 1; ; tried++) {
            try {
                return Optional.of(attempt.run());
            } catch (SQLException e) {
                if (!LOCK_NOT_AVAILABLE.equals(e.getSQLState())) {
                    throw e;
                }
                if (tried == attempts) {
                    return Optional.empty();
                }
            }
            try {
                rest.take(Duration.ofNanos((long) (base.toNanos() * jitter.getAsDouble())));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted between attempts", e);
            }
            base = base.multipliedBy(2).compareTo(LONGEST_REST) > 0 ? LONGEST_REST : base.multipliedBy(2);
        }
    }
}
