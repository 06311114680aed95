package org.idempotent.retention.entity;

import static java.util.Objects.requireNonNull;

import jakarta.ejb.ScheduleExpression;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * How long a dedup record must be kept, and how the purge runs. A record purged too early lets a late redelivery
 * through as a new payment, so the window must outlast every way a message can come back:
 * {@code window >= maxDeliveryAttempts x maxRedeliveryDelay + dlqReplay + 1 day margin}, and never under a day. The
 * rules every other retention decision follows are here too: the {@linkplain #horizon dedup horizon} a delivery is
 * judged by, and the {@linkplain #requireAnnouncementWindow outbox's window}.
 */
public record RetentionPolicy(
        Duration window,
        int batchSize,
        Duration timeBudget,
        int rowsPerSecond,
        long walBytesPerSecond,
        String schedule,
        int maxDeliveryAttempts,
        Duration maxRedeliveryDelay,
        Duration dlqReplay) {

    public static final String WINDOW_DAYS = "RETENTION_DAYS";
    public static final String BATCH_SIZE = "RETENTION_BATCH_SIZE";
    public static final String TIME_BUDGET_SECONDS = "RETENTION_TIME_BUDGET_SECONDS";
    public static final String ROWS_PER_SECOND = "RETENTION_ROWS_PER_SECOND";
    public static final String WAL_BYTES_PER_SECOND = "RETENTION_WAL_BYTES_PER_SECOND";
    public static final String SCHEDULE = "RETENTION_SCHEDULE";
    public static final String MAX_DELIVERY_ATTEMPTS = "BROKER_MAX_DELIVERY_ATTEMPTS";
    public static final String MAX_REDELIVERY_DELAY_SECONDS = "BROKER_MAX_REDELIVERY_DELAY_SECONDS";
    public static final String DLQ_REPLAY_DAYS = "DLQ_REPLAY_DAYS";
    /** How long a sent announcement stays in the outbox, for re-announcement; unsent ones are never purged. */
    public static final String ANNOUNCEMENT_WINDOW_DAYS = "ANNOUNCEMENT_RETENTION_DAYS";
    /** When sent announcements older than their window are purged, in the syntax of {@link #SCHEDULE}. */
    public static final String ANNOUNCEMENT_SCHEDULE = "ANNOUNCEMENT_PURGE_SCHEDULE";

    public static final Duration MINIMUM_WINDOW = Duration.ofDays(1);
    /**
     * Clock skew between producer, consumer and database clocks, and a purge running while a message is in flight:
     * the safe window's margin, and the horizon's.
     */
    public static final Duration MARGIN = Duration.ofDays(1);

    public static final int MAX_BATCH_SIZE = 100_000;

    /** 64 KiB/s: below it, the purge of a day's records at the least rate a consumer has would not end. */
    public static final long MIN_WAL_BYTES_PER_SECOND = 65_536;

    public RetentionPolicy {
        requireNonNull(window, WINDOW_DAYS);
        requireNonNull(timeBudget, TIME_BUDGET_SECONDS);
        requireNonNull(schedule, SCHEDULE);
        requireNonNull(maxRedeliveryDelay, MAX_REDELIVERY_DELAY_SECONDS);
        requireNonNull(dlqReplay, DLQ_REPLAY_DAYS);
    }

    /** The shortest window that no redelivery or documented replay can outlast. */
    public Duration safeWindow() {
        return maxRedeliveryDelay
                .multipliedBy(maxDeliveryAttempts)
                .plus(dlqReplay)
                .plus(MARGIN);
    }

    /**
     * The dedup horizon: how old a message may be and still be judged by the dedup table alone. The purge deletes a
     * record once it is {@code window} old, so a copy older than that may be a duplicate whose record is gone; the
     * horizon is the window less {@link #MARGIN}, but never under the margin itself: a window of a day or less (which
     * the purge refuses to run with) must not make every delivery stale.
     */
    public static Duration horizon(Duration window) {
        Duration lessMargin = window.minus(MARGIN);
        return lessMargin.compareTo(MARGIN) < 0 ? MARGIN : lessMargin;
    }

    /**
     * @return the outbox's window, if at least {@link #MINIMUM_WINDOW}
     * @throws UnsafeRetention if shorter: a sent announcement is kept for re-announcement at least a day
     */
    public static Duration requireAnnouncementWindow(Duration window) {
        if (window.compareTo(MINIMUM_WINDOW) < 0) {
            throw new UnsafeRetention(ANNOUNCEMENT_WINDOW_DAYS + "=" + days(window)
                    + " is under the minimum of 1 day; no sent announcement purged");
        }
        return window;
    }

    /** @throws UnsafeRetention naming every offending key, if the purge must not run with this policy */
    public RetentionPolicy requireSafe() {
        List<String> problems = new ArrayList<>();
        if (window.compareTo(MINIMUM_WINDOW) < 0) {
            problems.add(WINDOW_DAYS + "=" + days(window) + " is under the minimum of 1 day");
        } else if (window.compareTo(safeWindow()) < 0) {
            problems.add(WINDOW_DAYS + "=" + days(window) + " is shorter than " + MAX_DELIVERY_ATTEMPTS + " ("
                    + maxDeliveryAttempts + ") x " + MAX_REDELIVERY_DELAY_SECONDS + " ("
                    + maxRedeliveryDelay.toSeconds()
                    + ") + " + DLQ_REPLAY_DAYS + " (" + days(dlqReplay) + ") + 1 day margin = " + days(safeWindow())
                    + " days: a late redelivery could be applied twice");
        }
        if (batchSize < 1 || batchSize > MAX_BATCH_SIZE) {
            problems.add(BATCH_SIZE + "=" + batchSize + " is outside 1.." + MAX_BATCH_SIZE);
        }
        if (rowsPerSecond < 1) {
            problems.add(ROWS_PER_SECOND + "=" + rowsPerSecond + " must be positive");
        }
        if (walBytesPerSecond < MIN_WAL_BYTES_PER_SECOND) {
            problems.add(WAL_BYTES_PER_SECOND + "=" + walBytesPerSecond + " is under " + MIN_WAL_BYTES_PER_SECOND
                    + " (a WAL segment's worth of deletes would take minutes)");
        }
        if (timeBudget.isNegative() || timeBudget.isZero()) {
            problems.add(TIME_BUDGET_SECONDS + "=" + timeBudget.toSeconds() + " must be positive");
        }
        if (maxDeliveryAttempts < 1 || maxRedeliveryDelay.isNegative() || dlqReplay.isNegative()) {
            problems.add(MAX_DELIVERY_ATTEMPTS + ", " + MAX_REDELIVERY_DELAY_SECONDS + " and " + DLQ_REPLAY_DAYS
                    + " must be positive");
        }
        try {
            scheduleExpression();
        } catch (IllegalArgumentException e) {
            problems.add(SCHEDULE + "=" + schedule + ": " + e.getMessage());
        }
        if (!problems.isEmpty()) {
            throw new UnsafeRetention("Retention refused: " + String.join("; ", problems));
        }
        return this;
    }

    /**
     * How long to rest after a slice that deleted {@code rows} and wrote {@code walBytes} of WAL in {@code took}, so
     * that the purge goes no faster than {@link #rowsPerSecond} and {@link #walBytesPerSecond}, whichever binds: an
     * absolute rate, the same whether the table is large or small and the database busy or idle, so that what the
     * consumers' commits share with it (the WAL's flush, the disk, a core) is bounded. A slice slower than its rate
     * rests not at all, and a later one does not make up for it: the rate is a ceiling, never a target to catch up to.
     */
    public Duration restAfter(long rows, long walBytes, Duration took) {
        long forRows = rows * 1_000_000_000L / rowsPerSecond;
        long forWal = (long) (walBytes * 1e9 / walBytesPerSecond);
        long rest = Math.max(forRows, forWal) - took.toNanos();
        return rest > 0 ? Duration.ofNanos(rest) : Duration.ZERO;
    }

    /**
     * {@link #SCHEDULE} as a timer schedule: {@code field=value} pairs separated by {@code ;}, with the fields and
     * syntax of {@code @Schedule} (second, minute, hour, dayOfMonth, month, dayOfWeek, year), e.g.
     * {@code minute=*&#47;15;hour=*}.
     */
    public ScheduleExpression scheduleExpression() {
        return parseSchedule(schedule);
    }

    /** @see #scheduleExpression() */
    public static ScheduleExpression parseSchedule(String schedule) {
        ScheduleExpression expression = new ScheduleExpression();
        for (String part : schedule.split(";")) {
            String[] pair = part.split("=", 2);
            if (pair.length != 2 || pair[1].isBlank()) {
                throw new IllegalArgumentException("expected field=value pairs separated by ';', got '" + part + "'");
            }
            String value = pair[1].trim();
            switch (pair[0].trim().toLowerCase(Locale.ROOT)) {
                case "second" -> expression.second(value);
                case "minute" -> expression.minute(value);
                case "hour" -> expression.hour(value);
                case "dayofmonth" -> expression.dayOfMonth(value);
                case "month" -> expression.month(value);
                case "dayofweek" -> expression.dayOfWeek(value);
                case "year" -> expression.year(value);
                default -> throw new IllegalArgumentException("unknown field '" + pair[0].trim() + "'");
            }
        }
        return expression;
    }

    private static String days(Duration duration) {
        return String.format(Locale.ROOT, "%.2f", duration.toSeconds() / 86_400.0);
    }
}
