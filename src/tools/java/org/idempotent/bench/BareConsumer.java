package org.idempotent.bench;

import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory;
import org.idempotent.announcement.control.AnnouncementPublisher;
import org.idempotent.announcement.control.OutboxCursor;
import org.idempotent.announcement.control.Relay;
import org.idempotent.announcement.entity.AnnouncementMessage;
import org.idempotent.payment.control.PaymentMessageParser;
import org.idempotent.payment.entity.PaymentEvent;
import org.idempotent.postgres.AdvisoryLock;
import org.idempotent.stack.ChildProcess;
import org.idempotent.stack.Database;
import org.idempotent.stack.Settings;

/**
 * The floor of this design on this machine, in a JVM of its own: the product's work without the application server.
 * {@code CONSUMER_MAX_SESSIONS} Artemis JMS client sessions with the consumer's window, each receiving a message,
 * parsing it with the product's parser, running the product's statements over pgjdbc in one transaction (the dedup
 * insert, the guarded upsert that writes the outbox row; after a unique violation, the rollback and the read of the
 * original record) and acknowledging after the commit; and one relay thread publishing the outbox as the product's
 * relay does (its lock, the window past its position, one broker transaction per page, the move of the position), woken
 * by each commit and every 5 s. Runs until
 * killed; the benchmark times and checks it like a Payara instance.
 */
public final class BareConsumer {

    private static final String ORIGINAL = "SELECT fingerprint, processed_at FROM processed_events WHERE event_id = ?";
    private static final Logger LOG = Logger.getLogger(BareConsumer.class.getName());

    private final Settings settings;
    private final ActiveMQConnectionFactory factory;
    private final Semaphore relayWake = new Semaphore(0);

    private BareConsumer(Settings settings) {
        this.settings = settings;
        this.factory = new ActiveMQConnectionFactory(
                settings.brokerUrl(), settings.get("BROKER_USER"), settings.get("BROKER_PASSWORD"));
        factory.setConsumerWindowSize(settings.getInt("CONSUMER_WINDOW_BYTES"));
    }

    /** A bare consumer as a child process of the benchmark, its settings as its environment, its output in a log. */
    static final class Child extends ChildProcess {

        Child(Settings settings) throws IOException {
            super(
                    "bare-consumer",
                    List.of(
                            Path.of(System.getProperty("java.home"), "bin", "java")
                                    .toString(),
                            "-cp",
                            System.getProperty("java.class.path"),
                            BareConsumer.class.getName()),
                    settings.asEnvironment(),
                    settings.stackDir().resolve("bare-consumer.log"),
                    false);
        }
    }

    public static void main(String[] args) throws Exception {
        BareConsumer bare = new BareConsumer(Settings.fromEnvironment());
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < bare.settings.getInt("CONSUMER_MAX_SESSIONS"); i++) {
            threads.add(new Thread(bare::consume, "bare-session-" + i));
        }
        threads.add(new Thread(bare::relay, "bare-relay"));
        threads.forEach(Thread::start);
        LOG.info("bare consumer ready");
        for (Thread thread : threads) {
            thread.join();
        }
    }

    private void consume() {
        try (Connection broker = factory.createConnection();
                Session session = broker.createSession(Session.CLIENT_ACKNOWLEDGE);
                MessageConsumer consumer = session.createConsumer(session.createQueue(settings.get("PAYMENTS_QUEUE")));
                java.sql.Connection db = Database.connectAsApplication(settings);
                PreparedStatement insert = db.prepareStatement(DbCeiling.INSERT);
                PreparedStatement original = db.prepareStatement(ORIGINAL);
                PreparedStatement upsert = db.prepareStatement(DbCeiling.UPSERT)) {
            db.setAutoCommit(false);
            broker.start();
            while (true) {
                Message message = consumer.receive();
                PaymentEvent event = PaymentMessageParser.read(message);
                if (apply(event, db, insert, original, upsert)) {
                    relayWake.release();
                }
                message.acknowledge();
            }
        } catch (JMSException | SQLException e) {
            LOG.log(Level.SEVERE, "bare session failed", e);
            System.exit(1);
        }
    }

    /** @return whether the payment was applied (a duplicate reads its original record, as the product does) */
    private static boolean apply(
            PaymentEvent event,
            java.sql.Connection db,
            PreparedStatement insert,
            PreparedStatement original,
            PreparedStatement upsert)
            throws SQLException {
        try {
            insert.setObject(1, event.eventId());
            insert.setBytes(2, event.fingerprint());
            insert.setShort(3, (short) event.eventId().version());
            insert.executeUpdate();
        } catch (SQLException duplicate) {
            db.rollback();
            if (!"23505".equals(duplicate.getSQLState())) {
                throw duplicate;
            }
            original.setObject(1, event.eventId());
            try (ResultSet row = original.executeQuery()) {
                row.next();
            }
            db.commit();
            return false;
        }
        upsert.setString(1, event.accountId());
        upsert.setLong(2, event.amountCents());
        upsert.setObject(3, event.eventId());
        int applied = upsert.executeUpdate();
        db.commit();
        return applied == 1;
    }

    private void relay() {
        try (Connection broker = factory.createConnection();
                Session session = broker.createSession(Session.SESSION_TRANSACTED);
                MessageProducer producer =
                        session.createProducer(session.createTopic(settings.get("ANNOUNCEMENT_ADDRESS")));
                java.sql.Connection db = Database.connectAsApplication(settings)) {
            producer.setDeliveryMode(DeliveryMode.PERSISTENT);
            db.setAutoCommit(true);
            while (true) {
                relayWake.tryAcquire(5, TimeUnit.SECONDS);
                relayWake.drainPermits();
                AdvisoryLock.whileHeld(db, Relay.RELAY_LOCK, () -> {
                    while (Relay.publishNext(
                            db, OutboxCursor.position(db), false, batch -> publish(session, producer, batch))) {
                        // a full window: there may be more below the horizon
                    }
                    return true;
                });
            }
        } catch (JMSException | SQLException | InterruptedException e) {
            LOG.log(Level.SEVERE, "bare relay failed", e);
            System.exit(1);
        }
    }

    private static void publish(Session session, MessageProducer producer, List<AnnouncementMessage> batch) {
        try {
            for (AnnouncementMessage announcement : batch) {
                producer.send(AnnouncementPublisher.message(session, announcement));
            }
            session.commit();
        } catch (JMSException e) {
            throw new IllegalStateException("the bare relay's batch failed", e);
        }
    }
}
