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
 * The purge's loop, with a fake slice (the rows each DELETE would find, the WAL it wrote) and a fake clock: slices
 * until one finds fewer than a full slice, rests between them for the policy's rate, stops when the budget is spent.
 * A loop that never stops fails after 10 s.
 */
@Timeout(10)
class RetentionLoopTest {

    private static final int BATCH = 1000;

    private final AtomicLong clock = new AtomicLong();
    private final List<Duration> rests = new ArrayList<>();

    @Test
    void batchesUntilOneFindsFewerThanAFullBatch() throws SQLException {
        Deque<Integer> rows = new ArrayDeque<>(List.of(BATCH, BATCH, 250, 999));

        BatchedDelete.Result result = BatchedDelete.run(() -> slice(rows.poll()), BATCH, pacing(Duration.ofMinutes(1)));

        assertThat(result).isEqualTo(new BatchedDelete.Result(2250, 3, true));
        assertThat(rows).as("no batch after the short one").containsExactly(999);
    }

    @Test
    void restsAfterEveryFullSliceSoThatThePurgeKeepsToItsRate() throws SQLException {
        Deque<Integer> rows = new ArrayDeque<>(List.of(BATCH, BATCH, 0));

        BatchedDelete.run(
                () -> {
                    clock.addAndGet(Duration.ofMillis(10).toNanos()); // each slice takes 10 ms
                    return slice(rows.poll());
                },
                BATCH,
                pacing(Duration.ofMinutes(1)),
                clock::get);

        assertThat(rests)
                .as("1,000 rows at 20,000 a second: 50 ms a slice, 10 of work and 40 of rest")
                .containsExactly(Duration.ofMillis(40), Duration.ofMillis(40));
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
                    return slice(BATCH);
                },
                BATCH,
                pacing(Duration.ofSeconds(10)),
                clock::get);

        assertThat(result).isEqualTo(new BatchedDelete.Result(3 * BATCH, 3, false));
    }

    @Test
    void anInterruptedRestEndsThePurgeWithTheInterruptKept() {
        PurgePacing interrupted = new PurgePacing(policy(Duration.ofMinutes(1)), clock::get, pause -> {
            throw new InterruptedException("server stopping");
        });

        assertThatThrownBy(() -> BatchedDelete.run(() -> slice(BATCH), BATCH, interrupted))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("interrupted");
        assertThat(Thread.interrupted()).isTrue();
    }

    @Test
    void aPacingThatAlwaysGoesOnNeverStopsBeforeTheLastRow() throws SQLException {
        Deque<Integer> rows = new ArrayDeque<>(List.of(BATCH, BATCH, BATCH, BATCH, 1));

        assertThat(BatchedDelete.run(() -> slice(rows.poll()), BATCH, (slice, took) -> true))
                .isEqualTo(new BatchedDelete.Result(4 * BATCH + 1, 5, true));
    }

    /** A slice of {@code rows}, with the WAL of a row's delete and its share of full-page images. */
    private static BatchedDelete.Slice slice(int rows) {
        return new BatchedDelete.Slice(rows, rows * 170L);
    }

    private PurgePacing pacing(Duration budget) {
        return new PurgePacing(policy(budget), clock::get, pause -> {
            rests.add(pause);
            clock.addAndGet(pause.toNanos());
        });
    }

    private static RetentionPolicy policy(Duration budget) {
        return new RetentionPolicy(
                Duration.ofDays(14),
                BATCH,
                budget,
                20_000,
                16L << 20,
                "minute=*/15;hour=*",
                16,
                Duration.ofSeconds(60),
                Duration.ofDays(7));
    }
}
