package org.idempotent.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import jakarta.jms.JMSException;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory;
import org.apache.camel.CamelContext;
import org.apache.camel.Exchange;
import org.apache.camel.builder.RouteBuilder;
import org.apache.camel.component.jms.JmsComponent;
import org.apache.camel.component.jms.JmsMessage;
import org.apache.camel.impl.DefaultCamelContext;
import org.apache.camel.model.ProcessorDefinition;
import org.apache.camel.model.RouteDefinition;
import org.apache.camel.processor.idempotent.jdbc.JdbcMessageIdRepository;
import org.apache.camel.spring.spi.SpringTransactionPolicy;
import org.idempotent.announcement.entity.AnnouncementMessage;
import org.idempotent.payment.control.PaymentMessageParser;
import org.idempotent.payment.entity.PaymentEvent;
import org.idempotent.stack.ChildProcess;
import org.idempotent.stack.Settings;
import org.idempotent.telemetry.TraceContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jms.connection.CachingConnectionFactory;
import org.springframework.jms.connection.JmsTransactionManager;

/**
 * The peer: what a user would build instead of the product with Apache Camel 4, in a JVM of its own, consuming the same
 * preloaded queue as the product with {@code CONSUMER_MAX_SESSIONS} concurrent consumers (Spring's
 * DefaultMessageListenerContainer under camel-jms), the product's consumer window, and the same work as the product but
 * for the outbox: the product's parser, an idempotent consumer on camel-sql's {@link JdbcMessageIdRepository} (table
 * CAMEL_MESSAGEPROCESSED, primary key (processorName, messageId): its SELECT count, then its INSERT) keyed by the
 * payload's event ID, and the product's guarded upsert without its outbox insert ({@link #UPSERT}: the account's
 * balance, sequence and second guard, last_event_id, and the payments ledger row) on the product's own Flyway schema,
 * over a HikariCP pool as the application's role. Runs until killed; the benchmark times and checks it like a Payara
 * instance. Three variants ({@link Variant}):
 *
 * <ul>
 *   <li><b>Camel plain</b>: no transaction. Camel's defaults: AUTO_ACKNOWLEDGE (the message is acknowledged as it is
 *       received), the repository's insert in a transaction of its own, the upsert in autocommit. At most once: a
 *       failure or a crash after the receipt loses the message, and one between the repository's insert and the
 *       upsert leaves the ID recorded without its payment (Camel removes the ID on a failure it sees, not after a
 *       crash).
 *   <li><b>Camel transacted</b>: the JMS session transacted under Spring's {@link JmsTransactionManager} (on a {@link
 *       CachingConnectionFactory} with a session per consumer; the container's default cache level under a
 *       transaction manager, so receive, send and commit are on the transaction manager's one session), and the route
 *       {@code transacted()} under a {@link DataSourceTransactionManager}: the repository's SELECT and INSERT (its
 *       TransactionTemplate joins the route's transaction, the same DataSource) and the upsert in one JDBC transaction
 *       on PostgreSQL. No XA: best-effort one-phase commit, the database committed first, then the JMS session (the
 *       acknowledgement). A crash or a broker failure between the two: the message is redelivered, the repository
 *       finds its ID, and the copy is acknowledged without effect; the database's effect is exactly once, the
 *       acknowledgement at least once. Two copies of one event in flight at once: the second's INSERT waits for the
 *       first's commit, fails on the key, and Camel's repository marks the transaction rollback-only, so the route
 *       fails, the JMS session rolls back, and the broker redelivers the copy after its redelivery delay (1 s), when
 *       it is dropped as a duplicate.
 *   <li><b>Camel transacted + publish</b>: the same, and each applied payment (the upsert returned its row) published,
 *       persistent, to the announcement address (a JMS topic on the multicast address, journaled on its durable
 *       subscription queue as the product's are) on the consumer's JMS session: the send commits with the
 *       acknowledgement, after the database. Not atomic with the payment: a crash or a broker failure between the
 *       database's commit and the JMS commit discards the send, and the redelivery is a duplicate that publishes
 *       nothing, so that payment is never announced (at most once; the product's outbox announces each applied
 *       payment exactly once). A payment the second guard refuses publishes nothing, as in the product.
 * </ul>
 *
 * <p>What it does not do that the product does: no fingerprint of the payload (an ID reused for another payment is
 * dropped as a duplicate, where the product sends it to the conflicts queue), no read of the original after a
 * duplicate, no dead-lettering of a malformed message with its reason, no horizon or quarantine, no announcement
 * ordering per account beyond the commit order.
 */
public final class CamelPeer {

    /** The peer's variants, by the names the benchmark prints. */
    enum Variant {
        PLAIN("Camel plain", false, false),
        TRANSACTED("Camel transacted", true, false),
        PUBLISH("Camel transacted + publish", true, true);

        final String label;
        final boolean transacted;
        final boolean publishes;

        Variant(String label, boolean transacted, boolean publishes) {
            this.label = label;
            this.transacted = transacted;
            this.publishes = publishes;
        }

        /** The variant a pass of the benchmark belongs to, by its name (a cold pass's too), if it is the peer's. */
        static Optional<Variant> of(String pass) {
            for (Variant variant : values()) {
                if (pass.equals(variant.label) || pass.startsWith(variant.label + ",")) {
                    return Optional.of(variant);
                }
            }
            return Optional.empty();
        }
    }

    /**
     * Camel's own table for the repository (JdbcMessageIdRepository's create statement), made by the benchmark as the
     * schema's owner: the application's role may not create tables.
     */
    static final String TABLE = "CREATE TABLE CAMEL_MESSAGEPROCESSED (processorName VARCHAR(255),"
            + " messageId VARCHAR(100), createdAt TIMESTAMP, PRIMARY KEY (processorName, messageId))";

    /**
     * The product's guarded upsert ({@code Payments.GUARDED_UPSERT}) without the outbox insert: the account created or
     * added to unless this very event was the last one applied to it, the payments ledger row, and what an
     * announcement needs (no row: not applied).
     */
    static final String UPSERT = """
            WITH payment (account_id, amount_cents, event_id) AS (
                VALUES (CAST(? AS text), CAST(? AS bigint), CAST(? AS uuid))),
            applied AS (
                INSERT INTO accounts (id, balance_cents, last_event_id, updated_at, sequence)
                SELECT account_id, amount_cents, event_id, now(), 1 FROM payment
                ON CONFLICT (id) DO UPDATE
                   SET balance_cents = accounts.balance_cents + EXCLUDED.balance_cents,
                       last_event_id = EXCLUDED.last_event_id,
                       updated_at = EXCLUDED.updated_at,
                       sequence = accounts.sequence + 1
                 WHERE accounts.last_event_id IS DISTINCT FROM EXCLUDED.last_event_id
                RETURNING id, balance_cents, sequence),
            ledger AS (
                INSERT INTO payments (event_id, account_id, amount_cents)
                SELECT payment.event_id, applied.id, payment.amount_cents FROM applied, payment
                ON CONFLICT (event_id) DO NOTHING)
            SELECT balance_cents, sequence, clock_timestamp() FROM applied""";

    private static final Logger LOG = Logger.getLogger(CamelPeer.class.getName());

    private static final String EVENT_ID = "eventId";
    private static final String APPLIED = "applied";

    private CamelPeer() {}

    /**
     * The peer as a child process of the benchmark, its settings as its environment, its output in a log; the JVM
     * options of the benchmark's Payara (heap, collector, the run's --payara-jvm), so that neither JVM is tuned apart.
     */
    static final class Child extends ChildProcess {

        Child(Settings settings, Variant variant, List<String> jvmOptions) throws IOException {
            super("camel-peer", command(variant, jvmOptions), settings.asEnvironment(), log(settings), false);
        }

        private static List<String> command(Variant variant, List<String> jvmOptions) {
            List<String> command = new ArrayList<>();
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            // As PayaraMicroProcess starts Payara: the same heap and collector.
            command.add("-Xmx768m");
            command.add("-XX:+UseParallelGC");
            command.addAll(jvmOptions);
            command.addAll(extraJvmOptions());
            command.addAll(
                    List.of("-cp", System.getProperty("java.class.path"), CamelPeer.class.getName(), variant.name()));
            return command;
        }

        private static Path log(Settings settings) {
            return settings.stackDir().resolve("camel-peer.log");
        }
    }

    public static void main(String[] args) throws Exception {
        Variant variant = Variant.valueOf(args[0]);
        Settings settings = Settings.fromEnvironment();
        int sessions = settings.getInt("CONSUMER_MAX_SESSIONS");
        try (HikariDataSource database = dataSource(settings, sessions);
                CamelContext camel = new DefaultCamelContext()) {
            ActiveMQConnectionFactory broker = new ActiveMQConnectionFactory(
                    settings.brokerUrl(), settings.get("BROKER_USER"), settings.get("BROKER_PASSWORD"));
            broker.setConsumerWindowSize(settings.getInt("CONSUMER_WINDOW_BYTES"));
            JmsComponent jms = new JmsComponent();
            jms.setConcurrentConsumers(sessions);
            jms.setMaxConcurrentConsumers(sessions);
            if (variant.transacted) {
                CachingConnectionFactory cached = new CachingConnectionFactory(broker);
                // Default 1: the other consumers' sessions would be opened and closed for every message.
                cached.setSessionCacheSize(sessions);
                jms.setConnectionFactory(cached);
                jms.setTransacted(true);
                jms.setTransactionManager(new JmsTransactionManager(cached));
                DataSourceTransactionManager transactions = new DataSourceTransactionManager(database);
                camel.getRegistry().bind("database", new SpringTransactionPolicy(transactions));
            } else {
                jms.setConnectionFactory(broker);
            }
            camel.addComponent("jms", jms);
            JdbcMessageIdRepository repository = new JdbcMessageIdRepository(database, "payments");
            repository.setCreateTableIfNotExists(false);
            JdbcTemplate jdbc = new JdbcTemplate(database);
            String announcements = settings.get("ANNOUNCEMENT_ADDRESS");
            camel.addRoutes(new RouteBuilder() {
                @Override
                public void configure() {
                    RouteDefinition route =
                            from("jms:queue:" + settings.get("PAYMENTS_QUEUE")).routeId("payments");
                    ProcessorDefinition<?> start = variant.transacted ? route.transacted("database") : route;
                    var applying = start.process(CamelPeer::parse)
                            .idempotentConsumer(header(EVENT_ID), repository)
                            .process(exchange -> apply(exchange, jdbc));
                    if (variant.publishes) {
                        applying.filter(exchange -> exchange.getIn().getHeader(APPLIED, false, Boolean.class))
                                .to("jms:topic:" + announcements);
                    }
                }
            });
            camel.start();
            LOG.log(Level.INFO, "camel peer ready: {0}, {1} consumers", new Object[] {variant.label, sessions});
            new CountDownLatch(1).await(); // until the benchmark kills it
        }
    }

    private static HikariDataSource dataSource(Settings settings, int sessions) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(settings.jdbcUrl());
        config.setUsername(settings.get("DB_USER"));
        config.setPassword(settings.get("DB_PASSWORD"));
        // One connection per consumer, as the product's pool serves its sessions; a spare for the repository's start.
        config.setMaximumPoolSize(sessions + 1);
        config.setMinimumIdle(sessions + 1);
        config.setPoolName("camel-peer");
        return new HikariDataSource(config);
    }

    /** The product's parser on the JMS message; the event ID as the idempotent consumer's key. */
    private static void parse(Exchange exchange) throws JMSException {
        PaymentEvent event =
                PaymentMessageParser.read(exchange.getIn(JmsMessage.class).getJmsMessage());
        exchange.getIn().setHeader(EVENT_ID, event.eventId().toString());
        exchange.getIn().setBody(event);
    }

    /**
     * The upsert; the announcement's body (the product's format) when it applied the payment, else nothing to publish.
     */
    private static void apply(Exchange exchange, JdbcTemplate jdbc) {
        PaymentEvent event = exchange.getIn().getBody(PaymentEvent.class);
        List<AnnouncementMessage> applied = jdbc.query(
                UPSERT,
                (ResultSet row, int number) -> new AnnouncementMessage(
                        0,
                        event.eventId(),
                        event.accountId(),
                        event.amountCents(),
                        row.getLong(1),
                        row.getLong(2),
                        row.getTimestamp(3).toInstant(),
                        0,
                        1,
                        "payment",
                        TraceContext.NONE),
                event.accountId(),
                event.amountCents(),
                event.eventId());
        exchange.getIn().setHeader(APPLIED, !applied.isEmpty());
        // Only what a subscriber reads: Camel would otherwise map every header of the consumed message onto the send.
        exchange.getIn().removeHeaders("*", APPLIED);
        exchange.getIn().setBody(applied.isEmpty() ? null : applied.get(0).json());
    }
}
