package org.idempotent.postgres;

import java.sql.SQLException;
import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * Deletes old rows a slice at a time, each slice its own short transaction (the connection in autocommit), so that no
 * long-held row lock or long transaction stalls the consumers while a large backlog goes. A slice deletes at most
 * {@code sliceSize} rows; one that deletes fewer found the last of them. After every full slice the caller's pacing
 * decides, from what the slice did and how long it took, how long to rest and whether to go on.
 */
public final class BatchedDelete {

    /** What one slice did: the rows it deleted, and the WAL written while it ran. */
    public record Slice(int rows, long walBytes) {}

    /** One slice. */
    @FunctionalInterface
    public interface Batch {
        Slice delete() throws SQLException;
    }

    /** Asked after every full slice, with what it did and how long it took: false to stop before the next one. */
    @FunctionalInterface
    public interface Pacing {
        boolean goOn(Slice slice, Duration took);
    }

    /** What a run did; {@code complete} if its last slice found fewer rows than a full one. */
    public record Result(long deleted, int batches, boolean complete) {}

    private BatchedDelete() {}

    public static Result run(Batch batch, int sliceSize, Pacing pacing) throws SQLException {
        return run(batch, sliceSize, pacing, System::nanoTime);
    }

    /** With the clock that times each slice: System::nanoTime but for a test of a caller's pacing. */
    public static Result run(Batch batch, int sliceSize, Pacing pacing, LongSupplier nanoTime) throws SQLException {
        long deleted = 0;
        int batches = 0;
        while (true) {
            long started = nanoTime.getAsLong();
            Slice slice = batch.delete();
            batches++;
            deleted += slice.rows();
            if (slice.rows() < sliceSize) {
                return new Result(deleted, batches, true);
            }
            if (!pacing.goOn(slice, Duration.ofNanos(nanoTime.getAsLong() - started))) {
                return new Result(deleted, batches, false);
            }
        }
    }
}
