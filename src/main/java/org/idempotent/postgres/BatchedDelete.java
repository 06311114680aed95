package org.idempotent.postgres;

import java.sql.SQLException;
import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * Deletes old rows a batch at a time, each batch its own short transaction (the connection in autocommit), so that no
 * long-held row lock or long transaction stalls the consumers while a large backlog goes. The batch is a statement that
 * deletes at most {@code batchSize} rows ({@code DELETE ... WHERE ctid = ANY (ARRAY(SELECT ctid ... LIMIT ?))});
 * a batch that deletes fewer found the last of them.
 */
public final class BatchedDelete {

    /** One batch: the rows it deleted. */
    @FunctionalInterface
    public interface Batch {
        int delete() throws SQLException;
    }

    /** Asked after every full batch, with how long it took: false to stop before the next one. */
    @FunctionalInterface
    public interface Pacing {
        boolean goOn(Duration batch);
    }

    /** What a run did; {@code complete} if its last batch found fewer rows than a full one. */
    public record Result(long deleted, int batches, boolean complete) {}

    private BatchedDelete() {}

    public static Result run(Batch batch, int batchSize, Pacing pacing) throws SQLException {
        return run(batch, batchSize, pacing, System::nanoTime);
    }

    /** With the clock that times each batch: System::nanoTime but for a test of a caller's pacing. */
    public static Result run(Batch batch, int batchSize, Pacing pacing, LongSupplier nanoTime) throws SQLException {
        long deleted = 0;
        int batches = 0;
        while (true) {
            long started = nanoTime.getAsLong();
            int rows = batch.delete();
            batches++;
            deleted += rows;
            if (rows < batchSize) {
                return new Result(deleted, batches, true);
            }
            if (!pacing.goOn(Duration.ofNanos(nanoTime.getAsLong() - started))) {
                return new Result(deleted, batches, false);
            }
        }
    }
}
