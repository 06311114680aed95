package org.idempotent.announcement.control;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.idempotent.announcement.control.RelayPacing.Pass;
import org.junit.jupiter.api.Test;

/** When the relay runs a pass, driven by hand: a scheduler that only queues, a clock that moves when told. */
class RelayPacingTest {

    private final Deque<Runnable> submitted = new ArrayDeque<>();
    private final List<Long> retryDelays = new ArrayList<>();
    private final Deque<Runnable> retries = new ArrayDeque<>();
    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private final Deque<Pass> outcomes = new ArrayDeque<>();
    private int passes;
    private Runnable duringPass = () -> {};

    private final RelayPacing pacing = new RelayPacing(
            new RelayPacing.Scheduler() {
                @Override
                public void submit(Runnable task) {
                    submitted.add(task);
                }

                @Override
                public void schedule(Runnable task, long delayMillis) {
                    retries.add(task);
                    retryDelays.add(delayMillis);
                }
            },
            () -> {
                passes++;
                duringPass.run();
                return outcomes.isEmpty() ? Pass.DONE : outcomes.poll();
            },
            clock::get);

    @Test
    void wakesBeforeThePassStartsMakeOnePass() {
        pacing.wake();
        pacing.wake();
        pacing.wake();

        assertThat(submitted).hasSize(1);
        runSubmitted();
        assertThat(passes).isEqualTo(1);
        assertThat(submitted).isEmpty();
    }

    /**
     * The pass's last act is the check that lets go: a wake that comes as the pass ends, after its work, finds it still
     * running and cannot start one, so that check must see it and go round.
     */
    @Test
    void aWakeAsAPassEndsIsNotLostButMakesItGoRoundOnceMore() {
        duringPass = () -> {
            if (passes == 1) {
                pacing.wake();
            }
        };
        pacing.wake();

        runSubmitted();

        assertThat(passes)
                .as("a second pass for the rows committed at the end of the first")
                .isEqualTo(2);
        assertThat(submitted).as("no pass alongside the running one").isEmpty();
        pacing.wake();
        assertThat(submitted)
                .as("idle after the second: the next wake starts a pass")
                .hasSize(1);
    }

    @Test
    void aWakeDuringAPassIsNotLostButMakesItGoRoundOnceMore() {
        duringPass = () -> {
            if (passes == 1) {
                pacing.wake();
                pacing.wake();
            }
        };
        pacing.wake();

        runSubmitted();

        assertThat(passes)
                .as("the rows committed during the first pass are taken by a second")
                .isEqualTo(2);
        assertThat(submitted).as("no pass alongside the running one").isEmpty();
    }

    @Test
    void aFailedPassBacksOffASecondAndWakesMeanwhileRideOnTheRetry() {
        outcomes.add(Pass.FAILED);
        pacing.wake();
        runSubmitted();

        pacing.wake();
        pacing.wake();
        assertThat(submitted).as("no pass during the back-off").isEmpty();
        assertThat(retryDelays).as("one retry, however many wakes").containsExactly(RelayPacing.RETRY_MILLIS);

        clock.addAndGet(RelayPacing.RETRY_MILLIS * 1_000_000);
        retries.poll().run();
        runSubmitted();
        assertThat(passes).isEqualTo(2);
    }

    @Test
    void aBusyLockIsTriedAgainSoonerThanAFailure() {
        outcomes.add(Pass.LOCK_BUSY);
        pacing.wake();
        runSubmitted();

        assertThat(retryDelays).containsExactly(RelayPacing.LOCK_BUSY_RETRY_MILLIS);
        retries.poll().run();
        runSubmitted();
        assertThat(passes).as("the retry passes even without a wake").isEqualTo(2);
    }

    @Test
    void aWakeAfterTheBackOffRunsAtOnceAndTheLateRetryMakesOneMorePassAndNoOtherRetry() {
        outcomes.add(Pass.FAILED);
        pacing.wake();
        runSubmitted();

        clock.addAndGet(RelayPacing.RETRY_MILLIS * 1_000_000 + 1);
        pacing.wake();
        assertThat(submitted).as("a pass at once, not at the retry").hasSize(1);
        runSubmitted();
        assertThat(passes).isEqualTo(2);

        retries.poll().run();
        runSubmitted();
        assertThat(passes)
                .as("the retry's own pass, over whatever is unsent by then")
                .isEqualTo(3);
        assertThat(retries).as("no retry of the retry").isEmpty();

        outcomes.add(Pass.FAILED);
        pacing.wake();
        runSubmitted();
        assertThat(retryDelays)
                .as("a later failure backs off again: the retry made way for the next one")
                .containsExactly(RelayPacing.RETRY_MILLIS, RelayPacing.RETRY_MILLIS);
    }

    @Test
    void aPassThatFailsAgainBacksOffAgain() {
        outcomes.add(Pass.FAILED);
        outcomes.add(Pass.FAILED);
        pacing.wake();
        runSubmitted();
        clock.addAndGet(RelayPacing.RETRY_MILLIS * 1_000_000);
        retries.poll().run();
        runSubmitted();

        pacing.wake();
        assertThat(submitted).as("backing off after the second failure").isEmpty();
        assertThat(retryDelays).containsExactly(RelayPacing.RETRY_MILLIS, RelayPacing.RETRY_MILLIS);
    }

    private void runSubmitted() {
        while (!submitted.isEmpty()) {
            submitted.poll().run();
        }
    }
}
