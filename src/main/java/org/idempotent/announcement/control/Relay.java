package org.idempotent.announcement.control;

import jakarta.annotation.PostConstruct;
import jakarta.annotation.Resource;
import jakarta.ejb.EJB;
import jakarta.enterprise.concurrent.ManagedScheduledExecutorService;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Level;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.metrics.Counter;
import org.eclipse.microprofile.metrics.MetricRegistry;
import org.idempotent.Resources;
import org.idempotent.announcement.entity.AnnouncementMessage;
import org.idempotent.payment.entity.PaymentApplied;
import org.idempotent.schema.boundary.SchemaMigration;

/**
 * Publishes the outbox: reads unsent payment_announcements rows in id order, sends them to the announcement address
 * in one broker transaction per batch, then marks them sent. Woken by every payment this instance applies (after its
 * commit), by the {@code RelayTimer} every few seconds (for other instances' rows and after a failure) and by a
 * re-announcement. One relay at a time across instances: a PostgreSQL advisory lock held for the pass.
 *
 * <p>A send and its mark are not atomic: a crash between them publishes the batch again. The broker's duplicate
 * detection drops the copies (each message carries its row's {@link AnnouncementMessage#duplicateId()}), and a
 * subscriber can recognise one by its event ID and sequence. A duplicate in a transacted batch makes the broker refuse
 * the whole batch; the relay then sends that batch again message by message, outside a transaction, where the broker
 * refuses each duplicate alone and the relay counts it as published, so a batch holding one never loops.
 */
@ApplicationScoped
public class Relay {

    /** Configuration keys. */
    public static final String ADDRESS = "ANNOUNCEMENT_ADDRESS";

    public static final String RETENTION_DAYS = "ANNOUNCEMENT_RETENTION_DAYS";

    /** Advisory lock keys ("announce", "annpurge" in ASCII), the same on every instance. */
    static final long RELAY_LOCK = 0x616e6e6f756e6365L;

    static final long PURGE_LOCK = 0x616e6e7075726765L;
    /** Rows per broker transaction: one journal sync for the batch instead of one per message. */
    static final int BATCH_SIZE = 200;

    static final int PURGE_BATCH_SIZE = 5000;
    /** After a failed pass, and when another instance holds the lock (it may have finished before our rows came). */
    private static final long RETRY_MILLIS = 1000;

    private static final long LOCK_BUSY_RETRY_MILLIS = 100;

    static final String CLAIM = """
            UPDATE payment_announcements SET send_attempts = send_attempts + 1
             WHERE id IN (SELECT id FROM payment_announcements WHERE sent_at IS NULL ORDER BY id LIMIT ?)
            RETURNING id, event_id, account_id, amount_cents, balance_cents, account_sequence, applied_at, generation,
                      send_attempts""";
    static final String MARK_SENT = "UPDATE payment_announcements SET sent_at = clock_timestamp() WHERE id = ANY (?)";
    static final String BACKLOG = """
            SELECT count(*), coalesce(extract(epoch FROM clock_timestamp() - min(applied_at)), 0)
              FROM payment_announcements WHERE sent_at IS NULL""";
    static final String PURGE_BATCH = """
            DELETE FROM payment_announcements
             WHERE ctid = ANY (ARRAY(SELECT ctid FROM payment_announcements
                                      WHERE sent_at < clock_timestamp() - make_interval(days => ?) LIMIT ?))""";

    private static final Logger LOG = Logger.getLogger(Relay.class.getName());

    @Resource(lookup = Resources.DATA_SOURCE)
    DataSource dataSource;

    @Resource(lookup = Resources.CONNECTION_FACTORY)
    ConnectionFactory connectionFactory;

    @Resource
    ManagedScheduledExecutorService executor;

    @EJB
    SchemaMigration schema;

    @Inject
    Config config;

    @Inject
    MetricRegistry metrics;

    private final AtomicBoolean pending = new AtomicBoolean();
    private final AtomicBoolean running = new AtomicBoolean();
    private final AtomicBoolean retryScheduled = new AtomicBoolean();
    private volatile boolean failing;
    /** System.nanoTime() before which no pass starts: the back-off after a failed pass or a busy lock. */
    private volatile long resumeAt = System.nanoTime();

    private static final long BACKLOG_FRESHNESS_NANOS = TimeUnit.SECONDS.toNanos(5);
    private volatile double[] backlog;
    private volatile long backlogMeasuredAt;
    private Counter published;
    private Counter republished;

    @PostConstruct
    void registerMetrics() {
        published = metrics.counter("announcement.published");
        republished = metrics.counter("announcement.republished");
        metrics.gauge("announcement.unsent", this, relay -> relay.backlog()[0]);
        metrics.gauge("announcement.oldest.unsent.age.seconds", this, relay -> relay.backlog()[1]);
    }

    void paymentApplied(@Observes PaymentApplied applied) {
        wake();
    }

    /**
     * Starts a pass soon, unless one is running (it then goes round again) or the relay is backing off after a failed
     * pass or a busy lock (the retry then takes this wake with it). Never blocks.
     */
    public void wake() {
        pending.set(true);
        if (System.nanoTime() - resumeAt >= 0 && running.compareAndSet(false, true)) {
            executor.submit(this::run);
        }
    }

    private void run() {
        Pass pass = Pass.DONE;
        try {
            while (pass == Pass.DONE && pending.getAndSet(false)) {
                pass = drain();
            }
        } finally {
            running.set(false);
        }
        switch (pass) {
            case LOCK_BUSY -> retryIn(LOCK_BUSY_RETRY_MILLIS);
            case FAILED -> retryIn(RETRY_MILLIS);
            case DONE -> {
                // A wake that came after the loop's last check but before running was cleared found it still set.
                if (pending.get() && running.compareAndSet(false, true)) {
                    executor.submit(this::run);
                }
            }
        }
    }

    /** How a pass ended: everything sent; another instance relaying (ours are in its next pass, or our retry's). */
    private enum Pass {
        DONE,
        LOCK_BUSY,
        FAILED
    }

    private Pass drain() {
        schema.awaitMigrated();
        try (Connection db = dataSource.getConnection()) {
            db.setAutoCommit(true);
            if (!tryLock(db, RELAY_LOCK)) {
                return Pass.LOCK_BUSY;
            }
            // The classic API: the adapter gives a JMSContext no local transaction outside JTA, a Session it does
            // (AllowLocalTransactions on the pool).
            try (jakarta.jms.Connection broker = connectionFactory.createConnection();
                    Session session = broker.createSession(Session.SESSION_TRANSACTED)) {
                Topic address = session.createTopic(config.getValue(ADDRESS, String.class));
                List<AnnouncementMessage> batch;
                do {
                    batch = claim(db);
                    if (!batch.isEmpty()) {
                        publish(session, address, batch);
                        markSent(db, batch);
                    }
                } while (batch.size() == BATCH_SIZE);
            } finally {
                unlock(db, RELAY_LOCK);
            }
            if (failing) {
                failing = false;
                LOG.log(Level.INFO, "Relay resumed: announcements are published again");
            }
            return Pass.DONE;
        } catch (SQLException | RuntimeException | JMSException e) {
            // Nothing is lost: the rows stay unsent and the next pass takes them again.
            LOG.log(failing ? Level.FINE : Level.WARNING, "Relay pass failed, retrying in {0} ms: {1}", new Object[] {
                RETRY_MILLIS, e.toString()
            });
            failing = true;
            return Pass.FAILED;
        }
    }

    private void publish(Session transacted, Topic address, List<AnnouncementMessage> batch) throws JMSException {
        int dropped = 0;
        try {
            send(transacted, address, batch);
            transacted.commit();
        } catch (JMSException e) {
            // A resend in the batch: the broker refuses it, and with it the whole transaction. (A broken connection
            // fails the message-by-message sends below as well, and the pass with them.)
            LOG.log(
                    Level.INFO,
                    "Relay batch of {0} refused by the broker ({1}); sending it message by message",
                    new Object[] {batch.size(), e.getMessage()});
            transacted.rollback();
            // A connection of its own: the adapter allows one session per connection.
            try (jakarta.jms.Connection another = connectionFactory.createConnection();
                    Session single = another.createSession(Session.AUTO_ACKNOWLEDGE);
                    MessageProducer producer = single.createProducer(address)) {
                producer.setDeliveryMode(DeliveryMode.PERSISTENT);
                for (AnnouncementMessage announcement : batch) {
                    try {
                        sendOne(single, producer, announcement);
                    } catch (JMSException refused) {
                        if (!isDuplicate(refused)) {
                            throw refused;
                        }
                        dropped++; // the broker has it already: published before the crash that left it unmarked
                    }
                }
            }
        }
        published.inc(batch.size() - dropped);
        republished.inc(batch.stream().filter(AnnouncementMessage::republished).count());
    }

    /** The broker's duplicate detection refused the message (Artemis's ActiveMQDuplicateIdException). */
    static boolean isDuplicate(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (cause.getClass().getSimpleName().equals("ActiveMQDuplicateIdException")) {
                return true;
            }
        }
        return false;
    }

    private static void send(Session session, Topic address, List<AnnouncementMessage> batch) throws JMSException {
        try (MessageProducer producer = session.createProducer(address)) {
            producer.setDeliveryMode(DeliveryMode.PERSISTENT);
            for (AnnouncementMessage announcement : batch) {
                sendOne(session, producer, announcement);
            }
        }
    }

    private static void sendOne(Session session, MessageProducer producer, AnnouncementMessage announcement)
            throws JMSException {
        TextMessage message = session.createTextMessage(announcement.json());
        message.setStringProperty("JMSXGroupID", announcement.accountId());
        message.setStringProperty("_AMQ_DUPL_ID", announcement.duplicateId());
        message.setStringProperty(
                AnnouncementMessage.EVENT_ID, announcement.eventId().toString());
        message.setStringProperty(AnnouncementMessage.ACCOUNT_ID, announcement.accountId());
        message.setLongProperty(AnnouncementMessage.SEQUENCE, announcement.sequence());
        producer.send(message);
    }

    private static List<AnnouncementMessage> claim(Connection db) throws SQLException {
        List<AnnouncementMessage> batch = new ArrayList<>();
        try (PreparedStatement claim = db.prepareStatement(CLAIM)) {
            claim.setInt(1, BATCH_SIZE);
            try (ResultSet row = claim.executeQuery()) {
                while (row.next()) {
                    batch.add(new AnnouncementMessage(
                            row.getLong(1),
                            row.getObject(2, java.util.UUID.class),
                            row.getString(3),
                            row.getLong(4),
                            row.getLong(5),
                            row.getLong(6),
                            row.getTimestamp(7).toInstant(),
                            row.getInt(8),
                            row.getInt(9)));
                }
            }
        }
        // RETURNING has no order; the id order is the commit order of each account's payments.
        batch.sort(Comparator.comparingLong(AnnouncementMessage::rowId));
        return batch;
    }

    private static void markSent(Connection db, List<AnnouncementMessage> batch) throws SQLException {
        try (PreparedStatement mark = db.prepareStatement(MARK_SENT)) {
            mark.setArray(
                    1,
                    db.createArrayOf(
                            "bigint",
                            batch.stream().map(AnnouncementMessage::rowId).toArray(Long[]::new)));
            mark.executeUpdate();
        }
    }

    /** Deletes sent rows older than ANNOUNCEMENT_RETENTION_DAYS, in batches; unsent rows are never deleted. */
    public long purgeSent() {
        int days = config.getValue(RETENTION_DAYS, Integer.class);
        if (days < 1) {
            LOG.log(Level.SEVERE, "{0}={1} is under 1 day; no sent announcement purged", new Object[] {
                RETENTION_DAYS, days
            });
            return 0;
        }
        schema.awaitMigrated();
        try (Connection db = dataSource.getConnection()) {
            db.setAutoCommit(true);
            if (!tryLock(db, PURGE_LOCK)) {
                return 0;
            }
            try (PreparedStatement delete = db.prepareStatement(PURGE_BATCH)) {
                delete.setInt(1, days);
                delete.setInt(2, PURGE_BATCH_SIZE);
                long deleted = 0;
                int rows;
                do {
                    rows = delete.executeUpdate();
                    deleted += rows;
                } while (rows == PURGE_BATCH_SIZE);
                LOG.log(Level.FINE, "Purged {0} sent announcements older than {1} days", new Object[] {deleted, days});
                return deleted;
            } finally {
                unlock(db, PURGE_LOCK);
            }
        } catch (SQLException e) {
            LOG.log(Level.WARNING, "Purge of sent announcements failed: {0}", e.toString());
            return 0;
        }
    }

    /**
     * Unsent rows and the age in seconds of the oldest; -1 for both if the database does not answer. One query serves
     * both gauges and every scrape for {@link #BACKLOG_FRESHNESS_NANOS}, as the dedup table's gauges do.
     */
    private double[] backlog() {
        double[] measured = backlog;
        if (measured == null || System.nanoTime() - backlogMeasuredAt > BACKLOG_FRESHNESS_NANOS) {
            measured = measureBacklog();
            backlog = measured;
            backlogMeasuredAt = System.nanoTime();
        }
        return measured;
    }

    private double[] measureBacklog() {
        try (Connection db = dataSource.getConnection();
                PreparedStatement query = db.prepareStatement(BACKLOG);
                ResultSet row = query.executeQuery()) {
            row.next();
            return new double[] {row.getLong(1), row.getDouble(2)};
        } catch (SQLException e) {
            LOG.log(Level.FINE, "Announcement backlog unknown: {0}", e.toString());
            return new double[] {-1, -1};
        }
    }

    /** No pass before {@code millis} from now (wakes meanwhile wait for it); then one, with whatever is pending. */
    private void retryIn(long millis) {
        resumeAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        if (retryScheduled.compareAndSet(false, true)) {
            executor.schedule(
                    () -> {
                        retryScheduled.set(false);
                        pending.set(true);
                        if (running.compareAndSet(false, true)) {
                            executor.submit(this::run);
                        }
                    },
                    millis,
                    TimeUnit.MILLISECONDS);
        }
    }

    private static boolean tryLock(Connection db, long key) throws SQLException {
        try (PreparedStatement lock = db.prepareStatement("SELECT pg_try_advisory_lock(?)")) {
            lock.setLong(1, key);
            try (ResultSet row = lock.executeQuery()) {
                return row.next() && row.getBoolean(1);
            }
        }
    }

    private static void unlock(Connection db, long key) throws SQLException {
        try (PreparedStatement unlock = db.prepareStatement("SELECT pg_advisory_unlock(?)")) {
            unlock.setLong(1, key);
            unlock.execute();
        }
    }
}
