package org.idempotent.retention.control;

import java.time.Duration;
import java.util.function.LongSupplier;
import org.idempotent.postgres.BatchedDelete;
import org.idempotent.retention.entity.RetentionPolicy;

/**
 * The dedup purge's pace: after each batch, a rest that keeps the purge's share of the time to the policy's duty cycle
 * (the rest is the consumers'), and no batch once the time budget is spent (the next run goes on). An interrupted rest
 * ends the purge, as a server shutting down wants.
 */
final class PurgePacing implements BatchedDelete.Pacing {

    /**
     * The least rest after a partition's files were freed. Where the file system trims freed blocks online (ext4 with
     * {@code discard}), the trim rides on the journal commit after the unlink, and every commit's fsync waits for it
     * (performance.md): a rest of more than one journal commit gives each partition's files a commit of their own,
     * never two days' at once.
     */
    static final Duration AFTER_FILES_FREED = Duration.ofSeconds(2);

    /** Rests between batches; Thread::sleep but for tests. */
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
    public boolean goOn(Duration batch) {
        try {
            rest.take(policy.pauseAfter(batch));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("purge interrupted", e);
        }
        return nanoTime.getAsLong() - deadline <= 0;
    }

    /**
     * After a partition was dropped in {@code drop}: the duty cycle's rest, {@link #AFTER_FILES_FREED} at least;
     * whether the time budget allows another.
     */
    boolean goOnAfterFilesFreed(Duration drop) {
        Duration pause = policy.pauseAfter(drop);
        try {
            rest.take(pause.compareTo(AFTER_FILES_FREED) < 0 ? AFTER_FILES_FREED : pause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("purge interrupted", e);
        }
        return nanoTime.getAsLong() - deadline <= 0;
    }
}
