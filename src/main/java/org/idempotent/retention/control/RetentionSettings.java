package org.idempotent.retention.control;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import org.eclipse.microprofile.config.Config;
import org.idempotent.retention.entity.RetentionPolicy;

/**
 * The one reader of the retention settings: the dedup window ({@code RETENTION_DAYS}) the purge and the dedup horizon
 * go by, the purge's pacing and schedule, and the outbox's window. Read on every call, so that a changed
 * setting counts at the next purge or delivery without a redeploy.
 */
@ApplicationScoped
public class RetentionSettings {

    @Inject
    Config config;

    /** How long a dedup record is kept. */
    public Duration window() {
        return Duration.ofDays(config.getValue(RetentionPolicy.WINDOW_DAYS, Integer.class));
    }

    /** How long a sent announcement is kept in the outbox, for re-announcement; unchecked (see RetentionPolicy). */
    public Duration announcementWindow() {
        return Duration.ofDays(config.getValue(RetentionPolicy.ANNOUNCEMENT_WINDOW_DAYS, Integer.class));
    }

    /** When the outbox's sent rows are purged. */
    public String announcementSchedule() {
        return config.getValue(RetentionPolicy.ANNOUNCEMENT_SCHEDULE, String.class);
    }

    /** The purge's schedule alone, so that a bad value elsewhere cannot stop the timer. */
    public String schedule() {
        return config.getValue(RetentionPolicy.SCHEDULE, String.class);
    }

    /** Every rule of the dedup purge, unchecked: {@link RetentionPolicy#requireSafe()} says whether it may run. */
    public RetentionPolicy policy() {
        return new RetentionPolicy(
                window(),
                config.getValue(RetentionPolicy.BATCH_SIZE, Integer.class),
                Duration.ofSeconds(config.getValue(RetentionPolicy.TIME_BUDGET_SECONDS, Integer.class)),
                config.getValue(RetentionPolicy.ROWS_PER_SECOND, Integer.class),
                config.getValue(RetentionPolicy.WAL_BYTES_PER_SECOND, Long.class),
                schedule(),
                config.getValue(RetentionPolicy.MAX_DELIVERY_ATTEMPTS, Integer.class),
                Duration.ofSeconds(config.getValue(RetentionPolicy.MAX_REDELIVERY_DELAY_SECONDS, Integer.class)),
                Duration.ofDays(config.getValue(RetentionPolicy.DLQ_REPLAY_DAYS, Integer.class)));
    }
}
