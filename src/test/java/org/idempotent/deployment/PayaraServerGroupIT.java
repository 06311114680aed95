package org.idempotent.deployment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.idempotent.fixtures.HeadlessChromium;
import org.idempotent.fixtures.Ledger;
import org.idempotent.fixtures.PurgeWatch;
import org.idempotent.loadgen.PaymentProducer;
import org.idempotent.stack.Commands;
import org.idempotent.stack.Database;
import org.idempotent.stack.InstanceMetrics;
import org.idempotent.stack.PayaraInstance;
import org.idempotent.stack.Settings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;

/**
 * Payara Server as a deployment group: one DAS, two standalone instances in the group, set up by
 * setup-payara-server.sh with TARGET naming the group. Both instances consume the queue; the retention purge runs
 * once at a time across them; the admin console shows the group, its instances and the application deployed to it.
 */
class PayaraServerGroupIT {

    private static final Path INSTALLATION = Path.of(System.getProperty("payara.server.dir", "target/payara-server"))
            .resolve("payara6");
    private static final String GROUP = "payments-group";
    private static final List<String> INSTANCES = List.of("payments-1", "payments-2");
    private static final Duration PATIENCE = Duration.ofMinutes(3);
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private static Settings settings;
    private static PayaraServerDomain domain;
    private static final Map<String, PayaraInstance> instances = new HashMap<>();

    @BeforeAll
    static void setUpTheGroup() throws Exception {
        settings = Settings.fromEnvironment()
                .with("DB_NAME", "payments_it_group")
                .with("PAYMENTS_QUEUE", "it.group")
                .with("RETENTION_SCHEDULE", "second=*/5;minute=*;hour=*")
                // Small batches: a purge long enough to be seen at work, batch after batch.
                .with("RETENTION_BATCH_SIZE", "100");
        Database.recreate(settings);
        domain = PayaraServerDomain.createAndStart(
                INSTALLATION, Path.of("target", "payara-server-group").toAbsolutePath());
        domain.createDeploymentGroup(GROUP, INSTANCES)
                .forEach((name, port) -> instances.put(name, path -> URI.create("http://localhost:" + port + path)));

        Map<String, String> environment = domain.setupEnvironment(settings);
        environment.put("TARGET", GROUP);
        Commands.run(List.of("server-config/setup-payara-server.sh"), environment);

        for (PayaraInstance instance : instances.values()) {
            await().atMost(PATIENCE)
                    .ignoreExceptions()
                    .untilAsserted(() -> assertThat(HTTP.send(
                                            HttpRequest.newBuilder(instance.uri("/health/ready"))
                                                    .build(),
                                            HttpResponse.BodyHandlers.ofString())
                                    .statusCode())
                            .isEqualTo(200));
        }
    }

    @AfterAll
    static void stopTheDomain() throws Exception {
        if (domain != null) {
            domain.close();
        }
    }

    @Test
    void bothInstancesOfTheGroupConsumeAndEachEventIsAppliedOnce() throws Exception {
        String account = "group-" + UUID.randomUUID().toString().substring(0, 8);
        try (PaymentProducer producer = new PaymentProducer(settings)) {
            for (int i = 0; i < 200; i++) {
                UUID event = UUID.randomUUID();
                for (int copy = 0; copy < 3; copy++) {
                    producer.sendText(PaymentProducer.json(event, account, 100));
                }
            }
        }

        Ledger ledger = new Ledger(settings);
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(ledger.balance(account)).isEqualTo(200 * 100));
        for (String name : INSTANCES) {
            InstanceMetrics metrics = new InstanceMetrics(instances.get(name));
            assertThat(metrics.outcome("applied")).as("%s applied some", name).isPositive();
        }
        long applied = 0;
        for (PayaraInstance instance : instances.values()) {
            applied += new InstanceMetrics(instance).outcome("applied");
        }
        assertThat(applied).as("each event applied once, across the group").isEqualTo(200);
    }

    @Test
    void theRetentionPurgeRunsOnceAtATimeAcrossTheGroup() throws Exception {
        // 200 batches, seconds of purging; both instances' timers fire on the same 5-second ticks, so each tick is a
        // race for the lock.
        PurgeWatch.insertExpired(settings, 20_000);
        PurgeWatch.Seen seen = PurgeWatch.watch(settings, Duration.ofMinutes(1));

        assertThat(seen.expiredLeft()).as("every expired row purged").isZero();
        assertThat(seen.samplesAtWork()).as("purges observed at work").isPositive();
        assertThat(seen.most())
                .as("purges at work at the same moment, across the group")
                .isEqualTo(1);
    }

    @Test
    void theAdminConsoleShowsTheGroupItsInstancesAndTheApplication() throws Exception {
        WebDriver browser = HeadlessChromium.start();
        try {
            String console = "http://127.0.0.1:" + domain.adminPort();
            HeadlessChromium.openConsole(
                    browser, console + "/dg/dgs.jsf", page -> !rows(page, GROUP).isEmpty(), PATIENCE);
            HeadlessChromium.screenshot(browser, "payara-server-deployment-groups");
            browser.get(console + "/dg/dgInstances.jsf?dgName=" + GROUP);
            await().atMost(Duration.ofSeconds(30))
                    .ignoreExceptions()
                    .until(() -> INSTANCES.stream()
                            .allMatch(name -> !rows(browser, name).isEmpty()));
            HeadlessChromium.screenshot(browser, "payara-server-deployment-group-instances");
            for (String name : INSTANCES) {
                assertThat(rows(browser, name).get(0).getText()).as(name).contains("Running");
            }
            browser.get(console + "/dg/dgApplications.jsf?dgName=" + GROUP);
            await().atMost(Duration.ofSeconds(30))
                    .ignoreExceptions()
                    .until(() -> !rows(browser, "payment-consumer").isEmpty());
            HeadlessChromium.screenshot(browser, "payara-server-deployment-group-applications");

            assertThat(rows(browser, "payment-consumer"))
                    .as("the application deployed to the group")
                    .hasSize(1);
        } finally {
            browser.quit();
        }
    }

    private static List<WebElement> rows(WebDriver browser, String name) {
        return PayaraServerDomain.consoleTableRows(browser, name);
    }
}
