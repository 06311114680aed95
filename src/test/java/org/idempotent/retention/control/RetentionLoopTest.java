package org.idempotent.retention.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.idempotent.postgres.BatchedDelete;
import org.idempotent.retention.entity.RetentionPolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The purge's loop, with a fake batch (the rows each DELETE would find) and a fake clock: batches until one finds
 * fewer than a full batch, rests between them at the duty cycle, stops when the budget is spent. A loop that never
 * stops fails after 10 s.
 */
@Timeout(10)
class RetentionLoopTest {

    private static final int BATCH = 1000;

    private final AtomicLong clock = new AtomicLong();
    private final List<Duration> rests = new ArrayList<>();

    @Test
    void batchesUntilOneFindsFewerThanAFullBatch() throws SQLException {
        Deque<Integer> rows = new ArrayDeque<>(List.of(BATCH, BATCH, 250, 999));

        BatchedDelete.Result result = BatchedDelete.run(rows::poll, BATCH, pacing(50, Duration.ofMinutes(1)));

        assertThat(result).isEqualTo(new BatchedDelete.Result(2250, 3, true));
        assertThat(rows).as("no batch after the short one").containsExactly(999);
    }

    @Test
    void restsAfterEveryFullBatchSoThatThePurgeTakesItsDutyCycle() throws SQLException {
        Deque<Integer> rows = new ArrayDeque<>(List.of(BATCH, BATCH, 0));

        BatchedDelete.run(
                () -> {
                    clock.addAndGet(Duration.ofMillis(40).toNanos()); // each batch takes 40 ms
                    return rows.poll();
                },
                BATCH,
                pacing(20, Duration.ofMinutes(1)),
                clock::get);

        assertThat(rests)
                .as("at 20 %, 40 ms of work, then 160 ms of rest")
                .containsExactly(Duration.ofMillis(160), Duration.ofMillis(160));
    }

    @Test
    void stopsWhenTheBudgetIsSpentAndSaysSo() throws SQLException {
        AtomicLong batches = new AtomicLong();
        BatchedDelete.Result result = BatchedDelete.run(
                () -> {
                    assertThat(batches.incrementAndGet())
                            .as("batches, a backlog without end")
                            .isLessThan(100);
                    clock.addAndGet(Duration.ofSeconds(4).toNanos());
                    return BATCH;
                },
                BATCH,
                pacing(100, Duration.ofSeconds(10)),
                clock::get);

        assertThat(result).isEqualTo(new BatchedDelete.Result(3 * BATCH, 3, false));
    }

    @Test
    void anInterruptedRestEndsThePurgeWithTheInterruptKept() {
        PurgePacing interrupted = new PurgePacing(policy(50, Duration.ofMinutes(1)), clock::get, pause -> {
            throw new InterruptedException("server stopping");
        });

        assertThatThrownBy(() -> BatchedDelete.run(() -> BATCH, BATCH, interrupted))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("interrupted");
        assertThat(Thread.interrupted()).isTrue();
    }

    @Test
    void aPacingThatAlwaysGoesOnNeverStopsBeforeTheLastRow() throws SQLException {
        Deque<Integer> rows = new ArrayDeque<>(List.of(BATCH, BATCH, BATCH, BATCH, 1));

        assertThat(BatchedDelete.run(rows::poll, BATCH, batch -> true))
                .isEqualTo(new BatchedDelete.Result(4 * BATCH + 1, 5, true));
    }

    private PurgePacing pacing(int dutyCyclePercent, Duration budget) {
        return new PurgePacing(policy(dutyCyclePercent, budget), clock::get, pause -> {
            rests.add(pause);
            clock.addAndGet(pause.toNanos());
        });
    }

    private static RetentionPolicy policy(int dutyCyclePercent, Duration budget) {
        return new RetentionPolicy(
                Duration.ofDays(14),
                BATCH,
                budget,
                dutyCyclePercent,
                "minute=*/15;hour=*",
                16,
                Duration.ofSeconds(60),
                Duration.ofDays(7));
    }
}
