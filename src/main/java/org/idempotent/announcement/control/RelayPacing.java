package org.idempotent.announcement.control;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
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

    /** No pass running or submitted. */
    private static final int IDLE = 0;
    /** A pass submitted or running, and no wake since it started. */
    private static final int RUNNING = 1;
    /** A pass running, and a wake since it started: it goes round once more when it ends. */
    private static final int WOKEN = 2;

    private final Scheduler scheduler;
    private final Supplier<Pass> pass;
    private final LongSupplier nanoTime;

    private final AtomicInteger state = new AtomicInteger(IDLE);
    private final AtomicBoolean retryScheduled = new AtomicBoolean();
    /** nanoTime before which no pass starts: the back-off after a failed pass or a busy lock. */
    private volatile long resumeAt;

    RelayPacing(Scheduler scheduler, Supplier<Pass> pass, LongSupplier nanoTime) {
        this.scheduler = scheduler;
        this.pass = pass;
        this.nanoTime = nanoTime;
        this.resumeAt = nanoTime.getAsLong();
    }

    /** Starts a pass soon, unless one is running (it goes round again) or the relay is backing off. */
    void wake() {
        if (nanoTime.getAsLong() - resumeAt >= 0) {
            passSoon();
        }
    }

    private void passSoon() {
        while (true) {
            int now = state.get();
            if (now == WOKEN || (now == RUNNING && state.compareAndSet(RUNNING, WOKEN)) || (now == IDLE && start())) {
                return;
            }
        }
    }

    private boolean start() {
        if (!state.compareAndSet(IDLE, RUNNING)) {
            return false;
        }
        scheduler.submit(this::run);
        return true;
    }

    private void run() {
        Pass ended;
        do {
            // Whatever committed before this point is in the pass; a wake from here on makes it go round again.
            state.set(RUNNING);
            ended = runPass();
            // The one check that ends the loop: it fails if a wake came after the pass started.
        } while (ended == Pass.DONE && !state.compareAndSet(RUNNING, IDLE));
        switch (ended) {
            case LOCK_BUSY -> retryIn(LOCK_BUSY_RETRY_MILLIS);
            case FAILED -> retryIn(RETRY_MILLIS);
            case DONE -> {}
        }
    }

    private Pass runPass() {
        try {
            return pass.get();
        } catch (RuntimeException e) {
            state.set(IDLE);
            throw e;
        }
    }

    /** No pass before {@code millis} from now (wakes meanwhile ride on the retry); then one. */
    private void retryIn(long millis) {
        resumeAt = nanoTime.getAsLong() + millis * 1_000_000;
        state.set(IDLE);
        if (retryScheduled.compareAndSet(false, true)) {
            scheduler.schedule(
                    () -> {
                        retryScheduled.set(false);
                        passSoon();
                    },
                    millis);
        }
    }
}
