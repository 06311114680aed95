package org.idempotent.retention.control;

import java.util.logging.Level;
import java.util.logging.Logger;
import org.idempotent.retention.entity.PurgeRun;
import org.idempotent.retention.entity.RetentionPolicy;

/** What a purge run says when it ends: what it did, and, when it left expired records, that retention is behind. */
final class PurgeLog {

    private static final Logger LOG = Logger.getLogger(PurgeLog.class.getName());

    private PurgeLog() {}

    static void ended(PurgeRun run, RetentionPolicy policy) {
        LOG.log(
                Level.INFO,
                "Purge {0}: {1,number,#} rows deleted in {2,number,#} batches, {3,number,#} ms, cutoff {4}, "
                        + "oldest remaining {5}",
                new Object[] {
                    run.outcome(),
                    run.rowsDeleted(),
                    run.batches(),
                    run.duration().toMillis(),
                    run.cutoff(),
                    run.oldestRemainingAge()
                });
        if (run.outcome() == PurgeRun.Result.BUDGET_SPENT) {
            LOG.log(
                    Level.WARNING,
                    "Retention is behind: the run spent its {0} s budget with expired records left (the oldest "
                            + "remaining is {1} old, the window {2} days); at {3}={4,number,#} a run deletes at most "
                            + "{5,number,#} records. The next run goes on; runs that keep falling behind need a higher "
                            + "rate, a longer budget or a more frequent schedule (operations.md)",
                    new Object[] {
                        policy.timeBudget().toSeconds(),
                        run.oldestRemainingAge(),
                        policy.window().toDays(),
                        RetentionPolicy.ROWS_PER_SECOND,
                        policy.rowsPerSecond(),
                        policy.rowsPerSecond() * policy.timeBudget().toSeconds()
                    });
        }
    }
}
