package org.idempotent.announcement.control;

import jakarta.annotation.PostConstruct;
import jakarta.annotation.Resource;
import jakarta.ejb.EJB;
import jakarta.enterprise.concurrent.ManagedScheduledExecutorService;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Startup;
import jakarta.inject.Inject;
import jakarta.jms.JMSException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.eclipse.microprofile.metrics.MetricRegistry;
import org.idempotent.Resources;
import org.idempotent.announcement.control.RelayPacing.Pass;
import org.idempotent.announcement.entity.AnnouncementMessage;
import org.idempotent.delivery.entity.EventApplied;
import org.idempotent.postgres.AdvisoryLock;
import org.idempotent.schema.boundary.SchemaMigration;

/**
 * Publishes the {@link Outbox}: a pass takes the window of rows past the relay's position that can go (see the outbox),
 * has the {@link AnnouncementPublisher} send it in pages of one broker transaction each, then moves the position past
 * it, until no row below the horizon is left. Woken by every payment this
 * instance applies (after its commit), by the {@code RelayTimer} every few seconds (for other instances' rows and after
 * a failure) and by a re-announcement; {@link RelayPacing} decides when a pass runs. One relay at a time across
 * instances: an advisory lock held for the pass.
 *
 * <p>A send and the move of the position are not atomic: a relay that stops between them publishes the window's rest
 * again, and the broker's duplicate detection drops the copies (see the publisher); a subscriber can recognise one by
 * its event ID and sequence.
 */
@ApplicationScoped
public class Relay {

    /** Advisory lock key ("announce" in ASCII), the same on every instance. */
    public static final long RELAY_LOCK = 0x616e6e6f756e6365L;

    private static final Duration BACKLOG_FRESHNESS = Duration.ofSeconds(5);
    private static final Outbox.Backlog UNKNOWN = new Outbox.Backlog(-1, -1);
    /** How often at most the position moves over a window without rows (one write). */
    private static final Duration EMPTY_ADVANCE_INTERVAL = Duration.ofSeconds(1);

    private static final Logger LOG = Logger.getLogger(Relay.class.getName());

    @Resource(lookup = Resources.DATA_SOURCE)
    DataSource dataSource;

    @Resource
    ManagedScheduledExecutorService executor;

    @EJB
    SchemaMigration schema;

    @Inject
    Outbox outbox;

    @Inject
    AnnouncementPublisher publisher;

    @Inject
    MetricRegistry metrics;

    private RelayPacing pacing;
    private volatile boolean failing;
    private volatile boolean started;
    private volatile Outbox.Backlog backlog;
    private volatile long backlogMeasuredAt;
    private volatile long emptyAdvancedAt = System.nanoTime();

    @PostConstruct
    void start() {
        pacing = new RelayPacing(
                new RelayPacing.Scheduler() {
                    @Override
                    public void submit(Runnable task) {
                        executor.submit(task);
                    }

                    @Override
                    public void schedule(Runnable task, long delayMillis) {
                        executor.schedule(task, delayMillis, TimeUnit.MILLISECONDS);
                    }
                },
                this::pass,
                System::nanoTime);
        metrics.gauge("announcement.unsent", this, relay -> relay.backlog().unsent());
        metrics.gauge(
                "announcement.oldest.unsent.age.seconds",
                this,
                relay -> relay.backlog().oldestAgeSeconds());
    }

    void eventApplied(@Observes EventApplied applied) {
        wake();
    }

    /** A pass soon, with whatever is unsent by then; never blocks. */
    public void wake() {
        pacing.wake();
    }

    private Pass pass() {
        schema.awaitMigrated();
        try (Connection db = dataSource.getConnection()) {
            db.setAutoCommit(true);
            if (AdvisoryLock.whileHeld(db, RELAY_LOCK, () -> publishAll(db)).isEmpty()) {
                return Pass.LOCK_BUSY;
            }
            if (failing) {
                failing = false;
                LOG.log(Level.INFO, "Relay resumed: announcements are published again");
            }
            return Pass.DONE;
        } catch (SQLException | RuntimeException e) {
            // Nothing is lost: the rows stay unsent and the next pass takes them again.
            LOG.log(failing ? Level.FINE : Level.WARNING, "Relay pass failed, retrying in {0} ms: {1}", new Object[] {
                RelayPacing.RETRY_MILLIS, e.toString()
            });
            failing = true;
            return Pass.FAILED;
        }
    }

    private boolean publishAll(Connection db) throws SQLException {
        try (AnnouncementPublisher.Publication publication = publisher.open()) {
            boolean advanceEmpty = System.nanoTime() - emptyAdvancedAt > EMPTY_ADVANCE_INTERVAL.toNanos();
            while (Relay.publishNext(db, OutboxCursor.position(db), advanceEmpty, publication::publish)) {
                // a full window: there may be more below the horizon
            }
            if (advanceEmpty) {
                emptyAdvancedAt = System.nanoTime();
            }
            return true;
        } catch (JMSException e) {
            throw new IllegalStateException("the broker failed the relay's session: " + e, e);
        }
    }

    /**
     * Publishes the next window (or finishes the one a relay left mid-way) and moves the position past it: the window
     * opened, then its pages, then closed; so with a multi-page window, one write per page.
     *
     * @return whether the window was full, so that another may follow at once
     */
    public static boolean publishNext(
            Connection db, OutboxCursor.Position at, boolean advanceEmpty, Consumer<List<AnnouncementMessage>> send)
            throws SQLException {
        long end;
        long after;
        long attempted;
        if (at.windowOpen()) {
            end = at.windowEnd();
            after = Math.max(at.sentThrough(), OutboxCursor.firstId(db, at.position(), end) - 1);
            attempted = at.attemptedThrough();
        } else {
            OutboxCursor.Window next = OutboxCursor.window(db, at);
            if (next.firstId() == 0) {
                if (advanceEmpty && next.end() > at.position()) {
                    // Only other transactions ended (a duplicate's rollback, a purge): the position follows now and
                    // then, so that a quiet outbox's finished days can be dropped.
                    OutboxCursor.close(db, next.end());
                }
                return false;
            }
            end = next.end();
            after = next.firstId() - 1;
            attempted = 0;
        }
        OutboxCursor.Page page = OutboxCursor.page(db, at.position(), end, after, attempted, OutboxCursor.PAGE_SIZE);
        if (page.rows().isEmpty()) {
            // A window left with every page sent but the position not moved, or emptied by the lowered end.
            OutboxCursor.close(db, end);
            return at.windowOpen();
        }
        if (!at.windowOpen()) {
            OutboxCursor.open(db, end);
        }
        int pages = 0;
        while (true) {
            send.accept(page.rows());
            pages++;
            if (!page.full()) {
                break;
            }
            OutboxCursor.sentThrough(db, page.lastId());
            // The first page counted the resends of the whole rest of the window.
            page = OutboxCursor.page(db, at.position(), end, page.lastId(), 0, OutboxCursor.PAGE_SIZE);
            if (page.rows().isEmpty()) {
                break;
            }
        }
        OutboxCursor.close(db, end);
        return pages > 1 || page.full();
    }

    /**
     * The backlog, or -1 for both figures if the database does not answer or the application has not started yet. One
     * query serves both gauges, the health check and every scrape for {@link #BACKLOG_FRESHNESS}, as the dedup table's
     * gauges do.
     */
    public Outbox.Backlog backlog() {
        if (!started) {
            return UNKNOWN;
        }
        Outbox.Backlog measured = backlog;
        if (measured == null || System.nanoTime() - backlogMeasuredAt > BACKLOG_FRESHNESS.toNanos()) {
            measured = measure();
        }
        return measured;
    }

    /**
     * The first measurement at the end of deployment, in the application's context, which makes the outbox there.
     * Health checks and scrapes come earlier, on Payara's own threads: a bean with a {@code @Resource} made by one of
     * them cannot look it up (java:comp/env is the application's), and its first call would fail.
     */
    void measureOnceStarted(@Observes Startup startup) {
        measure();
        started = true;
    }

    private Outbox.Backlog measure() {
        Outbox.Backlog measured;
        try {
            measured = outbox.backlog();
        } catch (SQLException e) {
            LOG.log(Level.FINE, "Announcement backlog unknown: {0}", e.toString());
            measured = UNKNOWN;
        } catch (RuntimeException e) {
            // Thrown out of a gauge, an IllegalStateException makes Payara leave the metric out of the scrape
            // without a word: answer "unknown" as for a silent database, and say why.
            LOG.log(Level.WARNING, "Announcement backlog unknown", e);
            measured = UNKNOWN;
        }
        backlog = measured;
        backlogMeasuredAt = System.nanoTime();
        return measured;
    }
}
