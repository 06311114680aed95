package org.idempotent.operations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;
import java.io.IOException;
import java.io.StringReader;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.ObjectName;
import org.idempotent.fixtures.Ledger;
import org.idempotent.fixtures.TestQueues;
import org.idempotent.loadgen.PaymentProducer;
import org.idempotent.operations.boundary.PaymentsJmx;
import org.idempotent.payment.entity.PaymentEvent;
import org.idempotent.stack.AdminClient;
import org.idempotent.stack.BrokerProcess;
import org.idempotent.stack.Build;
import org.idempotent.stack.Database;
import org.idempotent.stack.FreePort;
import org.idempotent.stack.InstanceMetrics;
import org.idempotent.stack.PayaraMicroProcess;
import org.idempotent.stack.RemoteJmx;
import org.idempotent.stack.Settings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What an operator sees: metrics, health, the admin API and the MBean, on an instance with a broker and a database
 * of its own, both of which these tests stop and start again.
 */
class OperationsIT {

    private static final Duration PATIENCE = Duration.ofSeconds(60);
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

    @BeforeAll
    static void start() throws Exception {
        settings = Settings.fromEnvironment()
                .with("DB_NAME", "payments_it_operations")
                .with("PAYMENTS_QUEUE", "it.operations")
                .withFreeBrokerPorts()
                .with(
                        "STACK_DIR",
                        Settings.fromEnvironment()
                                .stackDir()
                                .resolve("operations")
                                .toString())
                .with("CONSUMER_STUCK_SECONDS", "3")
                .with("HTTP_PORT", String.valueOf(FreePort.find()));
        Database.recreate(settings);
        Files.createDirectories(settings.stackDir());
        broker = BrokerProcess.start(settings, false, TestQueues.brokerProperties());
        Path viewerPassword = settings.stackDir().resolve("viewer-password");
        Files.writeString(viewerPassword, "AS_ADMIN_USERPASSWORD=" + VIEWER_PASSWORD + "\n");
        jmxPort = FreePort.find();
        micro = PayaraMicroProcess.startReady(
                "operations-it",
                settings,
                Build.WAR,
                // A user who can log in but lacks the administrator role.
                List.of("create-file-user --groups payments-viewer --passwordfile " + viewerPassword + " " + VIEWER),
                RemoteJmx.jvmOptions(jmxPort));
        metrics = new InstanceMetrics(micro);
        admin = AdminClient.as(micro, settings.get("ADMIN_USER"), settings.get("ADMIN_PASSWORD"));
        ledger = new Ledger(settings);
    }

    @AfterAll
    static void stop() {
        if (micro != null) {
            micro.close();
        }
        if (broker != null) {
            broker.stop(Duration.ofSeconds(30));
        }
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
    void theDashboardNamesOnlyMetricsTheConsumerOrTheBrokerExports() throws Exception {
        String account = account();
        send(UUID.randomUUID(), account, 1);
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(ledger.balance(account)).isEqualTo(1));
        String consumer = metrics.text();
        String brokerMetrics = HTTP.send(
                        HttpRequest.newBuilder(java.net.URI.create(
                                        "http://127.0.0.1:" + settings.get("BROKER_METRICS_PORT") + "/metrics"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
        Set<String> exported = new HashSet<>();
        for (String line : (consumer + "\n" + brokerMetrics).split("\n")) {
            if (!line.isBlank() && !line.startsWith("#")) {
                exported.add(line.split("[{ ]", 2)[0]);
            }
        }
        assertThat(exported).as("both endpoints answered").contains("payments_messages_total", "artemis_message_count");

        String dashboard = Files.readString(Path.of("docker", "grafana-dashboard.json"));
        List<String> expressions = new ArrayList<>();
        for (JsonValue panel :
                Json.createReader(new StringReader(dashboard)).readObject().getJsonArray("panels")) {
            for (JsonValue target : panel.asJsonObject().getJsonArray("targets")) {
                expressions.add(target.asJsonObject().getString("expr"));
            }
        }
        assertThat(expressions).hasSizeGreaterThan(10);
        Matcher metric = Pattern.compile("\\b(?:payments|artemis|retention)_[a-z0-9_]+\\b")
                .matcher(String.join("\n", expressions));
        Set<String> named = new HashSet<>();
        while (metric.find()) {
            named.add(metric.group());
        }
        assertThat(exported).as("every metric the dashboard queries").containsAll(named);
        Matcher queue = Pattern.compile("queue=\"([^\"]+)\"").matcher(String.join("\n", expressions));
        while (queue.find()) {
            assertThat(brokerMetrics)
                    .as("the broker exports queue %s", queue.group(1))
                    .contains("queue=\"" + queue.group(1) + "\"");
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
            broker = BrokerProcess.start(settings, false, TestQueues.brokerProperties());
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
