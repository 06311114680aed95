package org.idempotent.retention.boundary;

import jakarta.annotation.PostConstruct;
import jakarta.annotation.Resource;
import jakarta.ejb.DependsOn;
import jakarta.ejb.EJB;
import jakarta.ejb.Singleton;
import jakarta.ejb.Startup;
import jakarta.ejb.Timeout;
import jakarta.ejb.Timer;
import jakarta.ejb.TimerConfig;
import jakarta.ejb.TimerService;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.idempotent.retention.control.Retention;
import org.idempotent.retention.entity.RetentionPolicy;
import org.idempotent.retention.entity.UnsafeRetention;

/**
 * Runs the purge on RETENTION_SCHEDULE. A calendar timer built from configuration rather than {@code @Schedule},
 * whose expression is fixed at compile time; non-persistent, like {@code @Schedule(persistent = false)}: a missed run
 * is simply the next one, and every instance has its own timer (the advisory lock lets one of them work).
 */
@Startup
@Singleton
@DependsOn("SchemaMigration")
public class RetentionTimer {

    private static final Logger LOG = Logger.getLogger(RetentionTimer.class.getName());

    @Resource
    TimerService timers;

    @EJB
    Retention retention;

    private String schedule;

    @PostConstruct
    void start() {
        RetentionPolicy policy = retention.policy();
        try {
            policy.requireSafe();
        } catch (UnsafeRetention e) {
            // Consumption goes on (keeping dedup records longer is always safe); each run refuses until fixed.
            LOG.log(Level.SEVERE, "{0}. The purge will refuse to run until the configuration is fixed.", e.getMessage());
        }
        schedule(policy.schedule());
    }

    @Timeout
    void purge(Timer timer) {
        retention.purge();
        String configured = retention.policy().schedule();
        if (!configured.equals(schedule)) {
            timer.cancel();
            schedule(configured);
        }
    }

    private void schedule(String expression) {
        try {
            RetentionPolicy policy = retention.policy();
            timers.createCalendarTimer(policy.scheduleExpression(), new TimerConfig("processed_events retention", false));
            schedule = expression;
            LOG.log(Level.INFO, "Retention: purging rows older than {0} on schedule {1}",
                    new Object[] {policy.window(), expression});
        } catch (IllegalArgumentException e) {
            LOG.log(Level.SEVERE, "Retention not scheduled: " + RetentionPolicy.SCHEDULE + "={0} is invalid: {1}",
                    new Object[] {expression, e.getMessage()});
        }
    }
}
