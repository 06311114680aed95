package org.idempotent.operations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import jakarta.jms.JMSConsumer;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSProducer;
import jakarta.jms.Queue;
import jakarta.jms.Topic;
import jakarta.json.JsonObject;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.ObjectName;
import org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory;
import org.assertj.core.api.SoftAssertions;
import org.idempotent.announcement.control.Relay;
import org.idempotent.fixtures.Ledger;
import org.idempotent.fixtures.PrometheusServer;
import org.idempotent.fixtures.SideBySide;
import org.idempotent.fixtures.TestQueues;
import org.idempotent.loadgen.PaymentProducer;
import org.idempotent.loadgen.PoisonKind;
import org.idempotent.operations.boundary.PaymentsJmx;
import org.idempotent.payment.entity.PaymentEvent;
import org.idempotent.retention.control.Retention;
import org.idempotent.stack.AdminClient;
import org.idempotent.stack.BrokerProcess;
import org.idempotent.stack.Build;
import org.idempotent.stack.Database;
import org.idempotent.stack.FreePort;
import org.idempotent.stack.InstanceMetrics;
import org.idempotent.stack.PayaraMicroProcess;
import org.idempotent.stack.PostgresCluster;
import org.idempotent.stack.RemoteJmx;
import org.idempotent.stack.Settings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceAccessMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * What an operator sees: metrics, health, the admin API and the MBean, on an instance with a broker and a PostgreSQL
 * cluster of its own, which these tests stop, reconfigure and hold locks on; and the shipped alert rules and dashboard
 * in a real Prometheus scraping both ({@link PrometheusServer}: every rule's {@code for:} scaled down, thresholds as
 * shipped). The alert scenarios come first, on a quiet stack, in order; stopping the consumer comes last. Most of the
 * class's time is waiting for Prometheus, so it runs beside the other classes, which share none of its servers.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Execution(ExecutionMode.CONCURRENT)
@ResourceLock(SideBySide.LANE)
@ResourceLock(value = SideBySide.FAULT_TIMING, mode = ResourceAccessMode.READ)
class OperationsIT {

    private static final Duration PATIENCE = Duration.ofSeconds(60);
    private static final String PAGING_QUEUE = "it.operations.paging";
    private static final String MEMORY_QUEUE = "it.operations.memory";
    private static final int GLOBAL_MAX_SIZE = 2 * 1024 * 1024;
    private static final String VIEWER = "viewer";
    private static final String VIEWER_PASSWORD = "viewer-password";
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private static Settings settings;
    private static BrokerProcess broker;
    private static PayaraMicroProcess micro;
    private static InstanceMetrics metrics;
    private static AdminClient admin;
    private static Ledger ledger;
    private static int jmxPort;
    private static PrometheusServer prometheus;
    private static PostgresCluster server;

    @BeforeAll
    static void start() throws Exception {
        Path stackDir = Settings.fromEnvironment().stackDir().resolve("operations");
        server = PostgresCluster.create(stackDir.resolve("postgres"), List.of());
        settings = server.serve(Settings.fromEnvironment())
                .with("DB_NAME", "payments_it_operations")
                // The shipped queue names, which the rules on the consumers' queues name: the broker is this test's.
                .with("PAYMENTS_QUEUE", "payments")
                .with("REFUNDS_QUEUE", "refunds")
                .withFreeBrokerPorts()
                .with("STACK_DIR", stackDir.toString())
                .with("CONSUMER_STUCK_SECONDS", "3")
                .with("HTTP_PORT", String.valueOf(FreePort.find()));
        Database.ensureExists(settings);
        List<String> brokerProperties = new ArrayList<>(TestQueues.brokerProperties());
        // An address that pages after a few messages.
        brokerProperties.add("addressSettings.\"" + PAGING_QUEUE + "\".maxSizeBytes=20000");
        brokerProperties.add("addressSettings.\"" + PAGING_QUEUE + "\".pageSizeBytes=10000");
        brokerProperties.add("addressSettings.\"" + PAGING_QUEUE + "\".addressFullMessagePolicy=PAGE");
        // What all addresses may hold in memory, small enough for a few messages to pass 80 % of it.
        brokerProperties.add("globalMaxSize=" + GLOBAL_MAX_SIZE);
        broker = BrokerProcess.start(settings, false, brokerProperties);
        Path viewerPassword = settings.stackDir().resolve("viewer-password");
        Files.writeString(viewerPassword, "AS_ADMIN_USERPASSWORD=" + VIEWER_PASSWORD + "\n");
        jmxPort = FreePort.find();
        micro = PayaraMicroProcess.startReadyLongLived(
                "operations-it",
                settings,
                Build.WAR,
                // A user who can log in but lacks the administrator role.
                List.of("create-file-user --groups payments-viewer --passwordfile " + viewerPassword + " " + VIEWER),
                RemoteJmx.jvmOptions(jmxPort));
        metrics = new InstanceMetrics(micro);
        admin = AdminClient.as(micro, settings.get("ADMIN_USER"), settings.get("ADMIN_PASSWORD"));
        ledger = new Ledger(settings);
        prometheus = PrometheusServer.start(settings.stackDir().resolve("prometheus"), targets());
    }

    /** Prometheus's targets: this test's consumer and broker. */
    private static Map<String, String> targets() {
        return Map.of(
                "payment-consumer", "127.0.0.1:" + settings.get("HTTP_PORT"),
                "payments-broker", "127.0.0.1:" + settings.get("BROKER_METRICS_PORT"));
    }

    @AfterAll
    static void stop() {
        if (prometheus != null) {
            prometheus.close();
        }
        if (micro != null) {
            micro.close();
        }
        if (broker != null) {
            broker.stop(Duration.ofSeconds(30));
        }
        if (server != null) {
            server.close();
        }
    }

    @Test
    @Order(1)
    void aCleanLoadMakesNoAlertFire() throws Exception {
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(prometheus.query("up == 1"))
                        .as("both targets scraped")
                        .hasSize(2));
        String account = account();
        long duplicates = metrics.outcome("duplicate");
        List<UUID> events = new ArrayList<>();
        try (PaymentProducer producer = new PaymentProducer(settings)) {
            for (int i = 0; i < 30; i++) {
                UUID event = UUID.randomUUID();
                events.add(event);
                producer.sendText(PaymentProducer.json(event, account, 10));
            }
            // A producer's resends, at a usual share: duplicates are part of a clean load.
            for (UUID event : events.subList(0, 3)) {
                producer.sendText(PaymentProducer.json(event, account, 10));
            }
        }
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(metrics.outcome("duplicate")).isEqualTo(duplicates + 3));
        assertThat(ledger.balance(account)).isEqualTo(300);

        // Several evaluations after the load: not even pending, which would fire once its (scaled) `for` passed. An
        // alert at any look fails at once, so the bound past the five seconds is room for looks that a loaded machine
        // slows, never for an alert to come and go (a look that fails would otherwise only start the five again).
        await().during(Duration.ofSeconds(5))
                .atMost(Duration.ofSeconds(5).plus(PATIENCE))
                .failFast(
                        "an alert pending or firing after a clean load",
                        () -> assertThat(prometheus.alerts()).isEmpty())
                .untilAsserted(() -> assertThat(prometheus.alerts()).isEmpty());
        assertThat(prometheus.unhealthyRules())
                .as("rules that failed to evaluate")
                .isEmpty();
    }

    @Test
    @Order(2)
    void deadLettersMakeTheDeadLetterAlertFire() throws Exception {
        long rejected = metrics.outcome("rejected");
        try (PaymentProducer producer = new PaymentProducer(settings)) {
            producer.send(PoisonKind.MALFORMED_JSON.create(producer.session(), UUID.randomUUID()));
            producer.send(PoisonKind.INVALID_AMOUNT.create(producer.session(), UUID.randomUUID()));
        }

        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(prometheus.firing()).containsExactly("PaymentsDeadLettersGrowing"));
        assertThat(metrics.outcome("rejected")).isEqualTo(rejected + 2);
    }

    /**
     * The relay held by its advisory lock, as a stuck relay or an outage holds it. The unsent row is made older than
     * the shipped 30 s bound instead of waited for (30 s of the suite): the gauge reads the row's age as written.
     */
    @Test
    @Order(3)
    void aHeldRelayMakesTheAnnouncementAgeAlertFireUntilItIsReleased() throws Exception {
        String account = account();
        UUID event = UUID.randomUUID();
        try (Connection db = Database.connect(settings);
                Statement relayLock = db.createStatement();
                PreparedStatement age = db.prepareStatement(
                        "UPDATE payment_announcements SET written_at = written_at - interval '2 minutes'"
                                + " WHERE event_id = ?")) {
            relayLock.execute("SELECT pg_advisory_lock(" + Relay.RELAY_LOCK + ")");
            try {
                send(event, account, 7);
                await().atMost(PATIENCE).until(() -> ledger.isProcessed(event));
                age.setObject(1, event);
                assertThat(age.executeUpdate())
                        .as("the payment's unsent announcement")
                        .isEqualTo(1);

                await().atMost(PATIENCE)
                        .untilAsserted(() -> assertThat(prometheus.firing()).contains("AnnouncementsDelayed"));
            } finally {
                relayLock.execute("SELECT pg_advisory_unlock(" + Relay.RELAY_LOCK + ")");
            }
        }

        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(prometheus.alerts()).doesNotContainKey("AnnouncementsDelayed"));
    }

    /** No panel, and no rule, points at a metric or a label value that neither the consumer nor the broker exports. */
    @Test
    @Order(4)
    void everyDashboardQueryAndEveryRulesSelectorReturnsASeriesAfterTheLoad() throws Exception {
        Map<String, String> queries = PrometheusServer.dashboardQueries();
        assertThat(queries).hasSizeGreaterThan(20);
        // Every empty one named, not only the first.
        SoftAssertions empty = new SoftAssertions();
        queries.forEach((panel, expression) -> empty.assertThat(prometheus.query(expression))
                .as("%s: %s", panel, expression)
                .isNotEmpty());
        PrometheusServer.ruleExpressions().forEach((rule, expression) -> {
            for (String selector : PrometheusServer.selectors(expression)) {
                empty.assertThat(prometheus.query(selector))
                        .as("%s: %s", rule, selector)
                        .isNotEmpty();
            }
        });
        empty.assertAll();
    }

    /**
     * Retention that does not run (another session holds its lock, as a purge stuck behind a long transaction would)
     * while the dedup table holds records two days past the window: RetentionBehind fires, and goes once they are gone.
     */
    @Test
    @Order(5)
    void recordsPastTheWindowWhileNoPurgeRunsMakeTheRetentionAlertFire() throws Exception {
        Duration window = Duration.ofDays(settings.getInt("RETENTION_DAYS"));
        try (Connection db = Database.connect(settings);
                Statement statement = db.createStatement()) {
            statement.execute("SELECT pg_advisory_lock(" + Retention.LOCK_KEY + ")");
            try {
                ledger.insertProcessed(3, window.plusDays(2));
                await().atMost(PATIENCE)
                        .untilAsserted(() -> assertThat(prometheus.firing()).contains("RetentionBehind"));
            } finally {
                statement.execute("DELETE FROM processed_events WHERE processed_at < now() - interval '"
                        + window.toDays() + " days'");
                statement.execute("SELECT pg_advisory_unlock(" + Retention.LOCK_KEY + ")");
            }
        }
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(prometheus.alerts()).doesNotContainKey("RetentionBehind"));
    }

    /**
     * An address past its max-size-bytes (PAGING_QUEUE's, made small for this test) with nothing reading it pages to
     * disk: BrokerPaging fires, and goes once the messages are read.
     */
    @Test
    @Order(6)
    void anAddressPagingToDiskMakesThePagingAlertFire() throws Exception {
        unreadMessagesMakeFireUntilRead("BrokerPaging", PAGING_QUEUE, 40, 2_000);
    }

    /**
     * A synchronous standby that is gone (synchronous_standby_names names one that never connects): a payment's commit
     * waits on the server; the consumer gives it up after its socket timeout without cutting it short, the breaker
     * opens on seeing it wait (readiness DOWN), and CommitsWaitingForStandby fires; once no standby is required the
     * commit completes, the payment is applied once, and the alert goes.
     */
    @Test
    @Order(7)
    void aCommitWaitingForAGoneStandbyMakesTheCommitWaitAlertFire() throws Exception {
        String account = account();
        try (Connection db = Database.connect(settings);
                Statement server = db.createStatement()) {
            server.execute("ALTER SYSTEM SET synchronous_standby_names = 'payments_it_absent_standby'");
            server.execute("SELECT pg_reload_conf()");
            try {
                send(UUID.randomUUID(), account, 11);
                await().atMost(PATIENCE)
                        .untilAsserted(() -> assertThat(prometheus.firing()).contains("CommitsWaitingForStandby"));
                await().atMost(PATIENCE)
                        .untilAsserted(() -> assertThat(prometheus.query("payments_database_breaker_open == 1"))
                                .as("the breaker open while its commits wait")
                                .isNotEmpty());
                assertThat(ledger.balance(account))
                        .as("the payment, not committed yet")
                        .isNull();
            } finally {
                server.execute("ALTER SYSTEM RESET synchronous_standby_names");
                server.execute("SELECT pg_reload_conf()");
            }
        }
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(ledger.balance(account)).isEqualTo(11));
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(prometheus.alerts()).doesNotContainKey("CommitsWaitingForStandby"));
    }

    /**
     * A downstream service's queue on the announcement address that nobody reads, past 1,000 announcements:
     * AnnouncementSubscriberBehind fires, and goes once the service reads its backlog.
     */
    @Test
    @Order(8)
    void aSubscriberQueueNobodyReadsMakesTheSubscriberAlertFire() throws Exception {
        String address = settings.get("ANNOUNCEMENT_ADDRESS");
        String queue = settings.get("BROKER_ANNOUNCEMENT_QUEUES").split(",")[0];
        ActiveMQConnectionFactory factory = new ActiveMQConnectionFactory(
                settings.brokerUrl(), settings.get("BROKER_OPERATOR_USER"), settings.get("BROKER_OPERATOR_PASSWORD"));
        try (JMSContext context = factory.createContext(JMSContext.SESSION_TRANSACTED)) {
            Topic announcements = context.createTopic(address);
            JMSProducer producer = context.createProducer();
            for (int i = 0; i < 1_001; i++) {
                producer.send(announcements, "{\"sequence\":" + i + "}");
            }
            context.commit();
            await().atMost(PATIENCE)
                    .untilAsserted(() -> assertThat(prometheus.firing()).contains("AnnouncementSubscriberBehind"));

            int read = 0;
            try (JMSConsumer reader = context.createConsumer(context.createQueue(address + "::" + queue))) {
                while (reader.receive(2_000) != null) {
                    if (++read % 500 == 0) {
                        context.commit();
                    }
                }
                context.commit();
            }
            assertThat(read).as("the backlog read").isGreaterThan(1_000);
        }
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(prometheus.alerts()).doesNotContainKey("AnnouncementSubscriberBehind"));
    }

    /**
     * Every session of the consumer waiting on one account's row lock, held by another session, while more of its
     * payments wait: the consumers stay attached and nothing is acknowledged, and PaymentsConsumersStalled fires; once
     * the lock goes, every payment is applied and the alert goes.
     */
    @Test
    @Order(9)
    void consumersThatAcknowledgeNothingWhileMessagesWaitMakeTheStallAlertFire() throws Exception {
        String account = account();
        send(UUID.randomUUID(), account, 1);
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(ledger.balance(account)).isEqualTo(1));
        int waiting = 2 * settings.getInt("CONSUMER_MAX_SESSIONS");

        try (AutoCloseable lock = ledger.lockAccount(account)) {
            for (int i = 0; i < waiting; i++) {
                send(UUID.randomUUID(), account, 1);
            }
            await().atMost(PATIENCE)
                    .untilAsserted(() -> assertThat(prometheus.firing()).contains("PaymentsConsumersStalled"));
            assertThat(prometheus.query("artemis_consumer_count{queue=\"payments\"} > 0"))
                    .as("the consumers attached all along")
                    .isNotEmpty();
        }

        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(ledger.balance(account)).isEqualTo(1 + waiting));
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(prometheus.alerts()).doesNotContainKey("PaymentsConsumersStalled"));
    }

    /**
     * Dead letters nobody reads for the rule's whole window (a day, here 24 minutes): a Prometheus started while the
     * two of {@link #deadLettersMakeTheDeadLetterAlertFire} wait has never seen payments.dlq empty, and DeadLettersWaiting
     * fires; the Prometheus that saw it empty before them does not.
     */
    @Test
    @Order(10)
    void deadLettersLeftForTheWholeWindowMakeTheWaitingAlertFire() throws Exception {
        try (PrometheusServer fresh =
                PrometheusServer.start(settings.stackDir().resolve("prometheus-fresh"), targets())) {
            await().atMost(PATIENCE)
                    .untilAsserted(() -> assertThat(fresh.firing()).contains("DeadLettersWaiting"));
        }
        assertThat(prometheus.alerts()).as("seen empty within the window").doesNotContainKey("DeadLettersWaiting");
    }

    /**
     * Messages nobody reads filling 85 % of what the broker may hold in memory (its global-max-size, made 2 MiB for
     * this test): BrokerMemoryHigh fires, and goes once they are read.
     */
    @Test
    @Order(11)
    void messagesFillingTheBrokersMemoryMakeTheMemoryAlertFire() throws Exception {
        // Under the client's large-message size (100 KiB), which the broker would keep on disk instead.
        int bodyBytes = 50 * 1024;
        unreadMessagesMakeFireUntilRead(
                "BrokerMemoryHigh", MEMORY_QUEUE, (int) (GLOBAL_MAX_SIZE * 0.85 / bodyBytes), bodyBytes);
    }

    /** {@code count} messages of {@code bodyBytes} on {@code queueName}, unread, fire {@code alert}; read, it goes. */
    private static void unreadMessagesMakeFireUntilRead(String alert, String queueName, int count, int bodyBytes)
            throws Exception {
        ActiveMQConnectionFactory factory = new ActiveMQConnectionFactory(
                settings.brokerUrl(), settings.get("BROKER_PRODUCER_USER"), settings.get("BROKER_PRODUCER_PASSWORD"));
        byte[] body = new byte[bodyBytes];
        try (JMSContext context = factory.createContext()) {
            Queue queue = context.createQueue(queueName);
            for (int i = 0; i < count; i++) {
                context.createProducer().send(queue, body);
            }
            await().atMost(PATIENCE)
                    .untilAsserted(() -> assertThat(prometheus.firing()).contains(alert));
            try (JMSConsumer reader = context.createConsumer(queue)) {
                for (int i = 0; i < count; i++) {
                    assertThat(reader.receive(PATIENCE.toMillis()))
                            .as("message %d", i)
                            .isNotNull();
                }
            }
        }
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(prometheus.alerts()).doesNotContainKey(alert));
    }

    @Test
    @Order(Integer.MAX_VALUE)
    void aStoppedConsumerMakesTheConsumerDownAlertFire() {
        assertThat(prometheus.alerts()).doesNotContainKey("PaymentConsumerDown");

        micro.stop(Duration.ofSeconds(30));

        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(prometheus.firing()).contains("PaymentConsumerDown"));
    }

    @Test
    void outcomesProcessingTimeAndTheDedupTableAreMeasured() throws Exception {
        String account = account();
        long applied = metrics.outcome("applied");
        long duplicates = metrics.outcome("duplicate");
        long conflicts = metrics.outcome("conflict");
        long rejected = metrics.outcome("rejected");
        double timed = metrics.gauge("payments_processing_microseconds_count");
        UUID first = UUID.randomUUID();
        UUID second = UUID.randomUUID();
        try (PaymentProducer producer = new PaymentProducer(settings)) {
            producer.sendText(PaymentProducer.json(first, account, 100));
            producer.sendText(PaymentProducer.json(second, account, 100));
            for (int i = 0; i < 8; i++) {
                producer.sendText(PaymentProducer.json(UUID.randomUUID(), account, 100));
            }
            // The resends only once the originals are applied: with several sessions on one account, a later send
            // can be processed first, and the 999 would then be the original and the 100 the conflict.
            await().atMost(PATIENCE).until(() -> ledger.isProcessed(first) && ledger.isProcessed(second));
            producer.sendText(PaymentProducer.json(first, account, 100));
            producer.sendText(PaymentProducer.json(second, account, 999));
            producer.sendText("{\"eventId\":");
        }

        await().atMost(PATIENCE).untilAsserted(() -> {
            assertThat(metrics.outcome("applied")).isEqualTo(applied + 10);
            assertThat(metrics.outcome("duplicate")).isEqualTo(duplicates + 1);
            assertThat(metrics.outcome("conflict")).isEqualTo(conflicts + 1);
            assertThat(metrics.outcome("rejected")).isEqualTo(rejected + 1);
        });
        assertThat(metrics.gauge("payments_processing_microseconds_count"))
                .as("every message is timed")
                .isEqualTo(timed + 13);
        assertThat(metrics.gauge("payments_processing_microseconds_sum")).isPositive();
        assertThat(ledger.balance(account)).isEqualTo(1000);

        ledger.age(first, Duration.ofDays(3));
        await().atMost(PATIENCE).ignoreExceptions().untilAsserted(() -> {
            assertThat(metrics.gauge("payments_processed_events_rows")).isGreaterThanOrEqualTo(10);
            assertThat(metrics.gauge("payments_processed_events_oldest_age_seconds"))
                    .isGreaterThanOrEqualTo(3 * 86_400);
        });
    }

    @Test
    void theMBeanShowsTheSameCountersAsMetrics() throws Exception {
        String account = account();
        send(UUID.randomUUID(), account, 5);
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(ledger.balance(account)).isEqualTo(5));

        try (RemoteJmx server = RemoteJmx.connect(jmxPort)) {
            ObjectName name = new ObjectName(PaymentsJmx.OBJECT_NAME);
            await().atMost(PATIENCE).untilAsserted(() -> {
                assertThat((Long) server.attribute(name, "Applied"))
                        .isEqualTo(metrics.outcome("applied"))
                        .isPositive();
                assertThat((Long) server.attribute(name, "Duplicates")).isEqualTo(metrics.outcome("duplicate"));
                assertThat((Long) server.attribute(name, "Conflicts")).isEqualTo(metrics.outcome("conflict"));
                assertThat((Long) server.attribute(name, "Rejected")).isEqualTo(metrics.outcome("rejected"));
                assertThat((Long) server.attribute(name, "Failed")).isEqualTo(metrics.outcome("failed"));
                assertThat((Long) server.attribute(name, "ProcessedEventsApproximately"))
                        .isPositive();
            });
            assertThat((Double) server.attribute(name, "ProcessingMeanMillis")).isPositive();
        }
    }

    @Test
    void theAdminApiRefusesAnonymousCallsAndUsersWithoutTheRole() {
        AdminClient anonymous = AdminClient.anonymous(micro);
        AdminClient viewer = AdminClient.as(micro, VIEWER, VIEWER_PASSWORD);
        String event = "/admin/events/" + UUID.randomUUID();

        assertThat(anonymous.get("/admin/stats").statusCode()).isEqualTo(401);
        assertThat(anonymous.get(event).statusCode()).isEqualTo(401);
        assertThat(anonymous.postJson(event + "/forget", Map.of("reason", "x")).statusCode())
                .isEqualTo(401);
        assertThat(viewer.get("/admin/stats").statusCode()).isEqualTo(403);
        assertThat(viewer.get(event).statusCode()).isEqualTo(403);
        assertThat(viewer.postJson(event + "/forget", Map.of("reason", "x")).statusCode())
                .isEqualTo(403);
        assertThat(admin.get("/admin/stats").statusCode()).isEqualTo(200);
    }

    @Test
    void aKnownProcessingTimeShowsInTheUnitTheMetricsNameSays() throws Exception {
        String account = account();
        send(UUID.randomUUID(), account, 1);
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(ledger.balance(account)).isEqualTo(1));

        // A delivery that waits 1.5 s for the account's row lock takes at least that long.
        try (AutoCloseable lock = ledger.lockAccount(account)) {
            send(UUID.randomUUID(), account, 2);
            await().atMost(PATIENCE).until(() -> ledger.sessionsWaitingForALock() >= 1);
            await().pollDelay(Duration.ofMillis(1500))
                    .atMost(Duration.ofSeconds(5))
                    .until(() -> true);
        }
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(ledger.balance(account)).isEqualTo(3));

        assertThat(metrics.gauge("payments_processing_microseconds_max"))
                .as("1.5 s in microseconds")
                .isBetween(1.5e6, 60e6);
        // Whatever else the server exports: a summary named in seconds holds seconds (a timer's nanoseconds under a
        // _seconds name, Payara's FISH-13137, would be millions).
        Matcher seconds = Pattern.compile("(?m)^(\\w+_seconds)_max(?:\\{[^}]*})? ([0-9.E+-]+)$")
                .matcher(metrics.text());
        while (seconds.find()) {
            assertThat(Double.parseDouble(seconds.group(2)))
                    .as(seconds.group(1))
                    .isLessThan(86_400.0 * 365);
        }
    }

    @Test
    void aPageInTheAdministratorsBrowserCannotForgetNorPurge() throws Exception {
        String account = account();
        UUID eventId = UUID.randomUUID();
        send(eventId, account, 31);
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(ledger.balance(account)).isEqualTo(31));

        HttpResponse<String> form =
                admin.postHtmlForm("/admin/events/" + eventId + "/forget", Map.of("reason", "forged by a web page"));
        HttpResponse<String> bodilessPurge = admin.postHtmlForm("/admin/retention/purge", Map.of());

        assertThat(form.statusCode()).isEqualTo(403);
        assertThat(form.body()).contains("X-Requested-By");
        assertThat(bodilessPurge.statusCode()).isEqualTo(403);
        assertThat(ledger.isProcessed(eventId)).as("not forgotten").isTrue();
        assertThat(ledger.forgettings(eventId)).isEmpty();
    }

    @Test
    void statsShowTheCountsAndTheDedupTable() {
        HttpResponse<String> response = admin.get("/admin/stats");

        assertThat(response.statusCode()).isEqualTo(200);
        JsonObject stats = AdminClient.json(response);
        assertThat(stats.getJsonObject("consumed").getJsonObject("messages").keySet())
                .contains("applied", "duplicate", "already_applied", "conflict", "rejected", "failed");
        assertThat(stats.getJsonObject("processedEvents").containsKey("approximateRows"))
                .isTrue();
        assertThat(stats.getJsonObject("processedEvents").getString("measuredAt"))
                .isNotBlank();
    }

    @Test
    void lookupTellsWhetherWhenAndWithWhichPayloadAnEventWasProcessed() throws Exception {
        String account = account();
        UUID eventId = UUID.randomUUID();
        send(eventId, account, 4200);
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(ledger.balance(account)).isEqualTo(4200));

        HttpResponse<String> found = admin.get("/admin/events/" + eventId);
        HttpResponse<String> unknown = admin.get("/admin/events/" + UUID.randomUUID());
        HttpResponse<String> malformed = admin.get("/admin/events/not-a-uuid");

        assertThat(found.statusCode()).isEqualTo(200);
        JsonObject record = AdminClient.json(found);
        assertThat(record.getBoolean("processed")).isTrue();
        assertThat(record.getString("processedAt")).isNotBlank();
        assertThat(record.getString("fingerprint"))
                .isEqualTo(HexFormat.of().formatHex(new PaymentEvent(eventId, account, 4200).fingerprint()));
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(AdminClient.json(unknown).getBoolean("processed")).isFalse();
        assertThat(malformed.statusCode()).isEqualTo(400);
        assertThat(malformed.body()).contains("not an event ID");
    }

    @Test
    void forgottenEventIsAppliedAgainWhenReplayedAndTheForgettingIsAudited() throws Exception {
        String account = account();
        UUID eventId = UUID.randomUUID();
        send(eventId, account, 250);
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(ledger.balance(account)).isEqualTo(250));
        String forget = "/admin/events/" + eventId + "/forget";

        assertThat(admin.postJson(forget, Map.of()).statusCode())
                .as("no reason given")
                .isEqualTo(400);
        assertThat(ledger.forgettings(eventId)).isEmpty();
        HttpResponse<String> forgotten = admin.postJson(forget, Map.of("reason", "replay after manual reversal"));

        assertThat(forgotten.statusCode()).isEqualTo(200);
        assertThat(AdminClient.json(forgotten).getString("forgottenBy")).isEqualTo(settings.get("ADMIN_USER"));
        assertThat(AdminClient.json(forgotten).getBoolean("guardReleased")).isTrue();
        assertThat(ledger.forgettings(eventId)).containsExactly("admin: replay after manual reversal");
        assertThat(ledger.isProcessed(eventId)).isFalse();
        HttpResponse<String> lookup = admin.get("/admin/events/" + eventId);
        assertThat(lookup.statusCode()).isEqualTo(404);
        assertThat(AdminClient.json(lookup).getJsonArray("forgotten")).hasSize(1);

        send(eventId, account, 250);

        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(ledger.balance(account)).isEqualTo(500));
        assertThat(ledger.isProcessed(eventId)).isTrue();
        assertThat(admin.postJson("/admin/events/" + UUID.randomUUID() + "/forget", Map.of("reason", "typo"))
                        .statusCode())
                .as("an event never processed")
                .isEqualTo(404);
    }

    // Readiness DOWN naming the database while PostgreSQL is stopped, liveness UP, readiness UP again after it: the
    // fault suite's databaseOutageLongerThanTheRedeliveryBudgetDeadLettersNothing, under load.

    @Test
    void readinessIsDownWhileTheBrokerIsStoppedAndTheConsumerReconnectsWhenItReturns() throws Exception {
        assertThat(health("/health/ready").statusCode()).isEqualTo(200);

        broker.stop(Duration.ofSeconds(30));
        try {
            awaitNotReadyFor("broker");
        } finally {
            List<String> brokerProperties = new ArrayList<>(TestQueues.brokerProperties());
            // An address that pages after a few messages.
            brokerProperties.add("addressSettings.\"" + PAGING_QUEUE + "\".maxSizeBytes=20000");
            brokerProperties.add("addressSettings.\"" + PAGING_QUEUE + "\".pageSizeBytes=10000");
            brokerProperties.add("addressSettings.\"" + PAGING_QUEUE + "\".addressFullMessagePolicy=PAGE");
            // What all addresses may hold in memory, small enough for a few messages to pass 80 % of it.
            brokerProperties.add("globalMaxSize=" + GLOBAL_MAX_SIZE);
            broker = BrokerProcess.start(settings, false, brokerProperties);
        }

        await().atMost(PATIENCE)
                .untilAsserted(
                        () -> assertThat(health("/health/ready").statusCode()).isEqualTo(200));
        String account = account();
        send(UUID.randomUUID(), account, 9);
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(ledger.balance(account)).isEqualTo(9));
    }

    @Test
    void livenessIsDownWhileADeliveryIsStuckAndUpOnceItCompletes() throws Exception {
        String account = account();
        send(UUID.randomUUID(), account, 1);
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(ledger.balance(account)).isEqualTo(1));
        assertThat(health("/health/live").statusCode()).isEqualTo(200);

        try (AutoCloseable lock = ledger.lockAccount(account)) {
            send(UUID.randomUUID(), account, 2);
            await().atMost(PATIENCE).untilAsserted(() -> {
                HttpResponse<String> live = health("/health/live");
                assertThat(live.statusCode()).isEqualTo(503);
                assertThat(live.body()).contains("payment-consumer-live");
            });
        }

        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(ledger.balance(account)).isEqualTo(3));
        await().atMost(PATIENCE)
                .untilAsserted(
                        () -> assertThat(health("/health/live").statusCode()).isEqualTo(200));
    }

    private static void send(UUID eventId, String account, long amountCents) throws Exception {
        try (PaymentProducer producer = new PaymentProducer(settings)) {
            producer.sendText(PaymentProducer.json(eventId, account, amountCents));
        }
    }

    private static void awaitNotReadyFor(String component) {
        await().atMost(PATIENCE).untilAsserted(() -> {
            HttpResponse<String> ready = health("/health/ready");
            assertThat(ready.statusCode()).isEqualTo(503);
            assertThat(ready.body()).contains("\"" + component + "\":\"DOWN");
        });
    }

    private static HttpResponse<String> health(String path) throws IOException, InterruptedException {
        return HTTP.send(
                HttpRequest.newBuilder(micro.uri(path))
                        .timeout(Duration.ofSeconds(20))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static String account() {
        return "ops-" + UUID.randomUUID().toString().substring(0, 8);
    }
}
