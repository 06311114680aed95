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
}
