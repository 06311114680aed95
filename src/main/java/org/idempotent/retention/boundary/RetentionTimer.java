package org.idempotent.retention.boundary;

import jakarta.annotation.PostConstruct;
import jakarta.annotation.Resource;
import jakarta.ejb.DependsOn;
import jakarta.ejb.EJB;
import jakarta.ejb.NoMoreTimeoutsException;
import jakarta.ejb.Singleton;
import jakarta.ejb.Startup;
import jakarta.ejb.Timeout;
import jakarta.ejb.Timer;
import jakarta.ejb.TimerConfig;
import jakarta.ejb.TimerService;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.eclipse.microprofile.metrics.MetricRegistry;
import org.idempotent.retention.control.Retention;
import org.idempotent.retention.control.RetentionSettings;
import org.idempotent.retention.entity.RetentionPolicy;
import org.idempotent.retention.entity.UnsafeRetention;
import org.idempotent.schema.boundary.SchemaMigration;

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

    @Inject
    RetentionSettings settings;

    @EJB
    SchemaMigration schema;

    @Inject
    MetricRegistry metrics;

    private String schedule;
    /** The schedule's interval as the timer runs it, known from its first timeout on; 0 until then. */
    private volatile long intervalSeconds;

    @PostConstruct
    void start() {
        try {
            settings.policy().requireSafe();
        } catch (UnsafeRetention | IllegalArgumentException e) {
            // Consumption goes on (keeping dedup records longer is always safe); each run refuses until fixed.
            LOG.log(
                    Level.SEVERE,
                    "{0}. The purge will refuse to run until the configuration is fixed.",
                    e.getMessage());
        }
        reschedule(null);
        // An alert on a purge overdue needs the interval whatever the schedule's form (a calendar expression).
        metrics.gauge("retention.interval.seconds", this, bean -> bean.intervalSeconds);
        // And one on retention falling behind, how old the oldest record may be: the window (read as the purge reads
        // it) and the layout's granule.
        metrics.gauge(
                "retention.oldest.allowed.age.seconds",
                this,
                bean -> bean.settings
                        .window()
                        .plus(bean.schema.dedupLayout().granule())
                        .toSeconds());
    }

    /**
     * The interval is measured before the purge, which may take minutes (now is this timeout's own time), and shown
     * after it: shown before, a scrape between the two would see a timer that has run and no purge that succeeded,
     * which RetentionOverdue reads as overdue.
     */
    @Timeout
    void purge(Timer timer) {
        long interval = intervalOf(timer);
        retention.purge();
        intervalSeconds = interval;
        reschedule(timer);
    }

    private long intervalOf(Timer timer) {
        try {
            return Duration.between(Instant.now(), timer.getNextTimeout().toInstant())
                    .toSeconds();
        } catch (NoMoreTimeoutsException last) {
            // A schedule that ends: the interval last measured stands.
            return intervalSeconds;
        }
    }

    /**
     * Creates the timer for the configured schedule when it is new or has changed since the current timer was made.
     * The replacement is created before the current timer is cancelled, so an invalid new schedule keeps the old one.
     */
    private void reschedule(Timer current) {
        String configured = settings.schedule();
        if (current != null && configured.equals(schedule)) {
            return;
        }
        try {
            timers.createCalendarTimer(
                    RetentionPolicy.parseSchedule(configured), new TimerConfig("processed_events retention", false));
        } catch (IllegalArgumentException e) {
            LOG.log(
                    Level.SEVERE,
                    "Retention schedule not changed: " + RetentionPolicy.SCHEDULE + "={0} is invalid: {1}",
                    new Object[] {configured, e.getMessage()});
            return;
        }
        if (current != null) {
            current.cancel();
        }
        schedule = configured;
        LOG.log(Level.INFO, "Retention: purging on schedule {0}", configured);
    }
}
