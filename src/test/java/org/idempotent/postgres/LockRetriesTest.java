package org.idempotent.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A maintenance statement refused its lock is tried again after growing, jittered rests, and only then. */
class LockRetriesTest {

    private final List<Duration> rests = new ArrayList<>();
    private final AtomicInteger runs = new AtomicInteger();

    @Test
    void aStatementRefusedItsLockIsTriedAgainAfterARestThatDoublesUpToTwoSeconds() throws SQLException {
        Optional<String> answer = LockRetries.attempt(
                () -> {
                    if (runs.incrementAndGet() < 7) {
                        throw new SQLException("canceling statement due to lock timeout", "55P03");
                    }
                    return "detached";
                },
                10,
                rests::add,
                () -> 1.0);

        assertThat(answer).contains("detached");
        assertThat(rests).extracting(Duration::toMillis).containsExactly(100L, 200L, 400L, 800L, 1600L, 2000L);
    }

    @Test
    void eachRestIsDrawnAroundItsStepSoThatRetriesDoNotFallIntoStep() throws SQLException {
        double[] jitter = {0.5, 1.5};
        AtomicInteger draw = new AtomicInteger();

        LockRetries.attempt(
                () -> {
                    if (runs.incrementAndGet() < 3) {
                        throw new SQLException("lock timeout", "55P03");
                    }
                    return 1;
                },
                10,
                rests::add,
                () -> jitter[draw.getAndIncrement() % 2]);

        assertThat(rests).extracting(Duration::toMillis).containsExactly(50L, 300L);
    }

    @Test
    void aLockRefusedEveryTimeAnswersEmptyAfterTheLastAttemptWithoutAFinalRest() throws SQLException {
        Optional<Integer> answer = LockRetries.attempt(
                () -> {
                    runs.incrementAndGet();
                    throw new SQLException("lock timeout", "55P03");
                },
                4,
                rests::add,
                () -> 1.0);

        assertThat(answer).isEmpty();
        assertThat(runs).hasValue(4);
        assertThat(rests).hasSize(3);
    }

    @Test
    void anyOtherFailureIsThrownAtOnce() {
        assertThatThrownBy(() -> LockRetries.attempt(
                        () -> {
                            runs.incrementAndGet();
                            throw new SQLException("is not a day partition of processed_events", "P0001");
                        },
                        10,
                        rests::add,
                        () -> 1.0))
                .hasMessageContaining("is not a day partition");
        assertThat(runs).hasValue(1);
        assertThat(rests).isEmpty();
    }
}
