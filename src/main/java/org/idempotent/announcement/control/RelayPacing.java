package org.idempotent.announcement.control;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * When the relay runs a pass: soon after every wake, one pass at a time, and after a failed pass or a busy lock not
 * before a back-off, however many wakes come meanwhile (they ride on the retry). A wake never blocks, nor is lost: one
 * that comes while a pass runs makes it go round again.
 */
final class RelayPacing {

    /** How a pass ended: everything sent; another instance relaying (ours are in its next pass, or our retry's). */
    enum Pass {
        DONE,
        LOCK_BUSY,
        FAILED
    }

    /** Where passes run: the container's managed executor, or a test's. */
    interface Scheduler {
        void submit(Runnable task);

        void schedule(Runnable task, long delayMillis);
    }

    /** After a failed pass, and when another instance holds the lock (it may have finished before our rows came). */
    static final long RETRY_MILLIS = 1000;

    static final long LOCK_BUSY_RETRY_MILLIS = 100;

    private final Scheduler scheduler;
    private final Supplier<Pass> pass;
    private final LongSupplier nanoTime;

    private final AtomicBoolean pending = new AtomicBoolean();
    private final AtomicBoolean running = new AtomicBoolean();
    private final AtomicBoolean retryScheduled = new AtomicBoolean();
    /** nanoTime before which no pass starts: the back-off after a failed pass or a busy lock. */
    private volatile long resumeAt;

    RelayPacing(Scheduler scheduler, Supplier<Pass> pass, LongSupplier nanoTime) {
        this.scheduler = scheduler;
        this.pass = pass;
        this.nanoTime = nanoTime;
        this.resumeAt = nanoTime.getAsLong();
    }

    /** Starts a pass soon, unless one is running or the relay is backing off. */
    void wake() {
        pending.set(true);
        if (nanoTime.getAsLong() - resumeAt >= 0 && running.compareAndSet(false, true)) {
            scheduler.submit(this::run);
        }
    }

    private void run() {
        Pass ended = Pass.DONE;
        try {
            while (ended == Pass.DONE && pending.getAndSet(false)) {
                ended = pass.get();
            }
        } finally {
            running.set(false);
        }
        switch (ended) {
            case LOCK_BUSY -> retryIn(LOCK_BUSY_RETRY_MILLIS);
            case FAILED -> retryIn(RETRY_MILLIS);
            case DONE -> {
                // A wake that came after the loop's last check but before running was cleared found it still set.
                if (pending.get() && running.compareAndSet(false, true)) {
                    scheduler.submit(this::run);
                }
            }
        }
    }

    /** No pass before {@code millis} from now (wakes meanwhile wait for it); then one, with whatever is pending. */
    private void retryIn(long millis) {
        resumeAt = nanoTime.getAsLong() + millis * 1_000_000;
        if (retryScheduled.compareAndSet(false, true)) {
            scheduler.schedule(
                    () -> {
                        retryScheduled.set(false);
                        pending.set(true);
                        if (running.compareAndSet(false, true)) {
                            scheduler.submit(this::run);
                        }
                    },
                    millis);
        }
    }
}
