package org.idempotent.announcement.boundary;

import jakarta.annotation.PostConstruct;
import jakarta.annotation.Resource;
import jakarta.ejb.ConcurrencyManagement;
import jakarta.ejb.ConcurrencyManagementType;
import jakarta.ejb.DependsOn;
import jakarta.ejb.Schedule;
import jakarta.ejb.Singleton;
import jakarta.ejb.Startup;
import jakarta.ejb.Timeout;
import jakarta.ejb.TimerConfig;
import jakarta.ejb.TimerService;
import jakarta.ejb.TransactionAttribute;
import jakarta.ejb.TransactionAttributeType;
import jakarta.inject.Inject;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.idempotent.announcement.control.OutboxDays;
import org.idempotent.announcement.control.Relay;
import org.idempotent.retention.control.RetentionSettings;
import org.idempotent.retention.entity.RetentionPolicy;

/**
 * The relay's safety net: every instance wakes it every few seconds, for rows whose own instance died before relaying
 * them, rows another instance committed while this one held the lock, and retries after a broker outage; and purges
 * sent announcements on ANNOUNCEMENT_PURGE_SCHEDULE (a calendar timer built from configuration, as the retention
 * timer's). Non-persistent, like the retention timer: a missed tick is simply the next one. No transaction: the relay
 * uses its connections in autocommit, under an advisory lock.
 */
@Startup
@Singleton
@DependsOn("SchemaMigration")
@ConcurrencyManagement(ConcurrencyManagementType.BEAN)
@TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED)
public class RelayTimer {

    private static final Logger LOG = Logger.getLogger(RelayTimer.class.getName());

    @Inject
    Relay relay;

    @Inject
    OutboxDays days;

    @Inject
    RetentionSettings settings;

    @Resource
    TimerService timers;

    @PostConstruct
    void start() {
        relay.wake();
        // The day partitions ahead before the first scheduled run: after a long stop, today's may be missing.
        timers.createSingleActionTimer(1, new TimerConfig("outbox maintenance at start", false));
        String schedule = settings.announcementSchedule();
        try {
            timers.createCalendarTimer(
                    RetentionPolicy.parseSchedule(schedule), new TimerConfig("sent announcement purge", false));
            LOG.log(Level.INFO, "Outbox: purging sent announcements on schedule {0}", schedule);
        } catch (IllegalArgumentException e) {
            // Relaying goes on; only the purge waits, and keeping sent rows longer loses nothing (a day without a
            // partition of its own is written to the default partition).
            LOG.log(
                    Level.SEVERE,
                    "No purge of sent announcements until " + RetentionPolicy.ANNOUNCEMENT_SCHEDULE
                            + "={0} is fixed and the application restarted: {1}",
                    new Object[] {schedule, e.getMessage()});
        }
    }

    @Schedule(hour = "*", minute = "*", second = "*/5", persistent = false, info = "announcement relay")
    void tick() {
        relay.wake();
    }

    @Timeout
    void purge() {
        days.purgeSent();
    }
}
