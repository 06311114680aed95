package org.idempotent.retention.control;

import java.time.Duration;
import java.util.function.LongSupplier;
import org.idempotent.postgres.BatchedDelete;
import org.idempotent.retention.entity.RetentionPolicy;

/**
 * The dedup purge's pace: after each slice, the rest that keeps it under the policy's rows and WAL bytes per second
 * ({@link RetentionPolicy#restAfter}), and no slice once the time budget is spent (the next run goes on). An
 * interrupted rest ends the purge, as a server shutting down wants.
 */
final class PurgePacing implements BatchedDelete.Pacing {

    /**
     * The rest after a partition's files were freed. Where the file system trims freed blocks online (ext4 with
     * {@code discard}), the trim rides on the journal commit after the unlink, and every commit's fsync waits for it
     * (performance.md): a rest of more than one journal commit gives each partition's files a commit of their own,
     * never two days' at once.
     */
    static final Duration AFTER_FILES_FREED = Duration.ofSeconds(2);

    /** Rests between slices; Thread::sleep but for tests. */
    @FunctionalInterface
    interface Rest {
        void take(Duration pause) throws InterruptedException;
    }

    private final RetentionPolicy policy;
    private final LongSupplier nanoTime;
    private final Rest rest;
    private final long deadline;

    PurgePacing(RetentionPolicy policy, LongSupplier nanoTime, Rest rest) {
        this.policy = policy;
        this.nanoTime = nanoTime;
        this.rest = rest;
        this.deadline = nanoTime.getAsLong() + policy.timeBudget().toNanos();
    }

    static PurgePacing of(RetentionPolicy policy) {
        return new PurgePacing(
                policy, System::nanoTime, pause -> Thread.sleep(pause.toMillis(), pause.toNanosPart() % 1_000_000));
    }

    @Override
    public boolean goOn(BatchedDelete.Slice slice, Duration took) {
        return restThenCheckBudget(policy.restAfter(slice.rows(), slice.walBytes(), took));
    }

    /** After a partition was dropped: {@link #AFTER_FILES_FREED}; whether the time budget allows another. */
    boolean goOnAfterFilesFreed() {
        return restThenCheckBudget(AFTER_FILES_FREED);
    }

    private boolean restThenCheckBudget(Duration pause) {
        if (!pause.isZero()) {
            try {
                rest.take(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("purge interrupted", e);
            }
        }
        return nanoTime.getAsLong() - deadline <= 0;
    }
}
