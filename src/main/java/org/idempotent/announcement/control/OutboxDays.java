package org.idempotent.announcement.control;

import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.logging.Level;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.idempotent.Resources;
import org.idempotent.postgres.AdvisoryLock;
import org.idempotent.postgres.LockRetries;
import org.idempotent.retention.control.RetentionSettings;
import org.idempotent.retention.entity.RetentionPolicy;
import org.idempotent.retention.entity.UnsafeRetention;
import org.idempotent.schema.boundary.SchemaMigration;

/**
 * The outbox's day partitions: made ahead, and dropped whole once past their window with every row published
 * (V7__outbox_cursor.sql, V13__maintenance_short_locks.sql). One instance at a time, in steps that are each a
 * transaction of their own, so that no step holds the payments' inserts for longer than a detach's 40 ms wait
 * ({@link LockRetries}): a day is detached, then its table dropped, which locks nothing a payment uses.
 */
@ApplicationScoped
public class OutboxDays {

    static final String DAYS_AHEAD = "SELECT announcement_days_ahead()";
    static final String EXPIRED = "SELECT announcement_expired_days(make_interval(secs => ?))";
    static final String DETACH = "SELECT announcement_detach_day(?, make_interval(secs => ?))";
    static final String DROP_DETACHED = "SELECT announcement_drop_detached_day()";
    static final String PURGE_DEFAULT = "SELECT announcement_purge_default(make_interval(secs => ?))";

    /** Advisory lock key of the purge ("annpurge" in ASCII), the same on every instance. */
    static final long PURGE_LOCK = 0x616e6e7075726765L;

    private static final Logger LOG = Logger.getLogger(OutboxDays.class.getName());

    @Resource(lookup = Resources.DATA_SOURCE)
    DataSource dataSource;

    @Inject
    RetentionSettings retention;

    @Inject
    SchemaMigration schema;

    /**
     * Drops the outbox's days past their window whose rows are all published, and creates those ahead; unsent rows are
     * never dropped.
     *
     * @return the rows deleted: 0 also when the window is unsafe, the database failed (both logged) or another
     *     instance's purge holds the lock
     */
    public long purgeSent() {
        try {
            Duration window = RetentionPolicy.requireAnnouncementWindow(retention.announcementWindow());
            schema.awaitMigrated();
            long deleted = purgeSent(window).orElse(0L);
            LOG.log(Level.FINE, "Purged {0} sent announcements older than {1}", new Object[] {deleted, window});
            return deleted;
        } catch (UnsafeRetention e) {
            LOG.log(Level.SEVERE, e.getMessage());
            return 0;
        } catch (SQLException e) {
            LOG.log(Level.WARNING, "Purge of sent announcements failed: {0}", e.toString());
            return 0;
        }
    }

    /**
     * Makes the next days' partitions, drops a day detached earlier and not dropped, then every day past
     * {@code window} whose rows are all published, and the default partition's published rows past it. A day whose
     * detach is refused every time waits for the next upkeep.
     *
     * @return the rows that went; empty if another instance's upkeep holds the lock
     */
    Optional<Long> purgeSent(Duration window) throws SQLException {
        try (Connection db = dataSource.getConnection();
                PreparedStatement ahead = db.prepareStatement(DAYS_AHEAD);
                PreparedStatement expired = db.prepareStatement(EXPIRED);
                PreparedStatement detach = db.prepareStatement(DETACH);
                PreparedStatement drop = db.prepareStatement(DROP_DETACHED);
                PreparedStatement purgeDefault = db.prepareStatement(PURGE_DEFAULT)) {
            db.setAutoCommit(true);
            return AdvisoryLock.whileHeld(db, PURGE_LOCK, () -> {
                answer(ahead);
                while (answer(drop) != null) {
                    // a day an earlier upkeep detached and did not get to drop
                }
                long gone = 0;
                for (String day : days(expired, window)) {
                    Optional<Long> rows = LockRetries.attempt(() -> Long.valueOf(answer(detach, day, window)));
                    if (rows.isEmpty()) {
                        LOG.log(
                                Level.WARNING,
                                "Outbox day {0} not dropped: its lock was refused; the next upkeep " + "tries again",
                                day);
                        break;
                    }
                    answer(drop);
                    gone += rows.get();
                }
                return gone + Long.parseLong(answer(purgeDefault, window));
            });
        }
    }

    private static List<String> days(PreparedStatement expired, Duration window) throws SQLException {
        List<String> days = new ArrayList<>();
        expired.setDouble(1, window.toSeconds());
        try (ResultSet rows = expired.executeQuery()) {
            while (rows.next()) {
                days.add(rows.getString(1));
            }
        }
        return days;
    }

    /** Runs {@code call} with {@code parameters} (a window in seconds) and answers its one value as text. */
    private static String answer(PreparedStatement call, Object... parameters) throws SQLException {
        for (int i = 0; i < parameters.length; i++) {
            call.setObject(i + 1, parameters[i] instanceof Duration d ? (double) d.toSeconds() : parameters[i]);
        }
        try (ResultSet row = call.executeQuery()) {
            row.next();
            return row.getString(1);
        }
    }
}
