package org.idempotent.deployment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.idempotent.fixtures.HeadlessChromium;
import org.idempotent.fixtures.Ledger;
import org.idempotent.loadgen.PaymentProducer;
import org.idempotent.stack.AdminClient;
import org.idempotent.stack.Commands;
import org.idempotent.stack.Database;
import org.idempotent.stack.PayaraInstance;
import org.idempotent.stack.Settings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;

/**
 * The product on full Payara Server 6, set up from scratch by server-config/setup-payara-server.sh in a fresh domain:
 * events flow through the broker into the database, and the admin console lists what the script created.
 */
class PayaraServerIT {

    private static final Path INSTALLATION = Path.of(System.getProperty("payara.server.dir", "target/payara-server"))
            .resolve("payara6");
    private static final Duration PATIENCE = Duration.ofMinutes(2);
    /** Every setting the application reads (server-config/configuration.properties): each a domain property after the setup. */
    private static final List<String> CONFIG_KEYS = List.of(
            "PAYMENTS_QUEUE",
            "DEAD_LETTER_QUEUE",
            "CONFLICTS_QUEUE",
            "QUARANTINE_QUEUE",
            "CONSUMER_MAX_SESSIONS",
            "CONSUMER_WINDOW_BYTES",
            "CONSUMER_STUCK_SECONDS",
            "DEDUP_PARTITIONING",
            "RETENTION_DAYS",
            "RETENTION_BATCH_SIZE",
            "RETENTION_TIME_BUDGET_SECONDS",
            "RETENTION_DUTY_CYCLE_PERCENT",
            "RETENTION_SCHEDULE",
            "BROKER_MAX_DELIVERY_ATTEMPTS",
            "BROKER_MAX_REDELIVERY_DELAY_SECONDS",
            "DLQ_REPLAY_DAYS",
            "ANNOUNCEMENT_ADDRESS",
            "ANNOUNCEMENT_RETENTION_DAYS",
            "ANNOUNCEMENT_PURGE_SCHEDULE");

    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private static Settings settings;
    private static PayaraServerDomain domain;
    private static PayaraInstance server;
    private static String missingDatabaseSetup;
    private static String secondSetup;

    @BeforeAll
    static void setUpDomain() throws Exception {
        settings =
                Settings.fromEnvironment().with("DB_NAME", "payments_it_server").with("PAYMENTS_QUEUE", "it.server");
        Database.recreate(settings);
        domain = PayaraServerDomain.createAndStart(
                INSTALLATION, Path.of("target", "payara-server-domains").toAbsolutePath());
        server = path -> URI.create("http://localhost:" + domain.httpPort() + path);

        Map<String, String> environment = domain.setupEnvironment(settings);
        // First against a database that does not exist: it stops before deploying and says what to do.
        Map<String, String> missingDatabase = new HashMap<>(environment);
        missingDatabase.put("DB_NAME", "payments_it_server_missing");
        missingDatabaseSetup = assertThrows(
                        IllegalStateException.class,
                        () -> Commands.run(List.of("server-config/setup-payara-server.sh"), missingDatabase))
                .getMessage();
        Commands.run(List.of("server-config/setup-payara-server.sh"), environment);
        // Run again on the domain it just set up: it converges, and exits 0.
        secondSetup = Commands.run(List.of("server-config/setup-payara-server.sh"), environment);

        await().atMost(PATIENCE).ignoreExceptions().untilAsserted(() -> {
            HttpResponse<String> ready = HTTP.send(
                    HttpRequest.newBuilder(server.uri("/health/ready")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(ready.statusCode()).isEqualTo(200);
            assertThat(ready.body()).contains("payment-consumer");
        });
    }

    @AfterAll
    static void stopDomain() throws Exception {
        if (domain != null) {
            domain.close();
        }
    }

    @Test
    void eventsThroughTheBrokerAreAppliedOnceEach() throws Exception {
        String account = "server-" + UUID.randomUUID().toString().substring(0, 8);
        UUID repeated = UUID.randomUUID();
        try (PaymentProducer producer = new PaymentProducer(settings)) {
            for (int i = 0; i < 40; i++) {
                producer.sendText(PaymentProducer.json(UUID.randomUUID(), account, 100));
            }
            for (int i = 0; i < 5; i++) {
                producer.sendText(PaymentProducer.json(repeated, account, 7));
            }
        }

        Ledger ledger = new Ledger(settings);
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(ledger.balance(account)).isEqualTo(4007));
        assertThat(AdminClient.anonymous(server).get("/admin/stats").statusCode())
                .isEqualTo(401);
        assertThat(AdminClient.as(server, settings.get("ADMIN_USER"), settings.get("ADMIN_PASSWORD"))
                        .get("/admin/stats")
                        .statusCode())
                .isEqualTo(200);
    }

    @Test
    void theSetupStopsBeforeDeployingWhenTheDatabaseDoesNotExist() {
        assertThat(missingDatabaseSetup)
                .contains("payments_it_server_missing", "does not answer", "createdb")
                .doesNotContain("Application deployed with name payment-consumer");
    }

    /**
     * The second and third runs of the setup replaced what the runs before created, rather than failing on it (the
     * first of them half-way: after the resources, before the deployment).
     */
    @Test
    void theSetupRunAgainConvergesOnTheSameDomain() throws Exception {
        assertThat(secondSetup)
                .contains(
                        "Command undeploy executed successfully",
                        "Command delete-jdbc-connection-pool executed successfully",
                        "Command update-password-alias executed successfully",
                        "Command deploy executed successfully")
                .doesNotContain("failed");
        assertThat(Files.readString(domain.domainXml()))
                .containsOnlyOnce(" jndi-name=\"jdbc/payments\"")
                .containsOnlyOnce(" name=\"payments-jms-pool\"")
                .containsOnlyOnce(" name=\"payments-pool\"");
    }

    /** Every health endpoint answers 200 on Payara Server too (the liveness setting comes from the domain). */
    @Test
    void healthEndpointsAnswer200() throws Exception {
        for (String path : List.of("/health", "/health/live", "/health/ready")) {
            HttpResponse<String> response =
                    HTTP.send(HttpRequest.newBuilder(server.uri(path)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as(path + ": " + response.body()).isEqualTo(200);
        }
    }

    @Test
    void passwordsAreStoredAsAliasesNotInDomainXml() throws Exception {
        String domainXml = Files.readString(domain.domainXml());

        assertThat(domainXml).contains("${ALIAS=payments-db-password}", "${ALIAS=payments-broker-password}");
        assertThat(domainXml).doesNotContainPattern("(?i)name=\"password\" value=\"(?!\\$\\{ALIAS=)");
    }

    @Test
    void theAdminConsoleListsTheApplicationAndItsResources() throws Exception {
        WebDriver browser = HeadlessChromium.start();
        try {
            String console = "http://127.0.0.1:" + domain.adminPort();
            HeadlessChromium.openConsole(
                    browser,
                    console + "/common/applications/applications.jsf",
                    page -> !mainTableRows(page, "payment-consumer").isEmpty(),
                    PATIENCE);
            assertListed(
                    browser, console + "/common/applications/applications.jsf", "payment-consumer", "applications");
            assertListed(browser, console + "/jdbc/jdbcConnectionPools.jsf", "payments-pool", "jdbc-pools");
            assertListed(browser, console + "/jdbc/jdbcResources.jsf", "jdbc/payments", "jdbc-resources");
            assertListed(browser, console + "/jca/resourceAdapterConfigs.jsf", "artemis-ra", "resource-adapters");
            assertListed(
                    browser, console + "/jca/connectorConnectionPools.jsf", "payments-jms-pool", "connector-pools");
            assertListed(
                    browser,
                    console + "/jca/connectorResources.jsf",
                    "jms/paymentsConnectionFactory",
                    "connector-resources");
            // Configurations > server-config > MicroProfile > Config, Property tab, source "domain": every key, each
            // in an editable name field of the page's property table.
            browser.get(console + "/microprofile/microprofile/specs/configAPI/propertyConfiguration.jsf"
                    + "?source=domain&configName=server-config");
            await().atMost(Duration.ofSeconds(30))
                    .ignoreExceptions()
                    .until(() -> !propertyNames(browser).isEmpty());
            HeadlessChromium.screenshot(browser, "payara-server-microprofile-config");
            assertThat(propertyNames(browser))
                    .as("the domain's MicroProfile Config properties")
                    .containsAll(CONFIG_KEYS);
        } finally {
            browser.quit();
        }
    }

    private static void assertListed(WebDriver browser, String page, String name, String screenshot) throws Exception {
        browser.get(page);
        await().atMost(Duration.ofSeconds(30))
                .ignoreExceptions()
                .until(() -> !mainTableRows(browser, name).isEmpty());
        HeadlessChromium.screenshot(browser, "payara-server-" + screenshot);
        assertThat(mainTableRows(browser, name)).as("%s lists %s", page, name).hasSize(1);
    }

    /** The names in the property table's row headers, which the console shows as text fields. */
    private static List<String> propertyNames(WebDriver browser) {
        return browser
                .findElements(By.xpath("//table[contains(concat(' ', @class, ' '), ' Tbl_sun4 ')]//tr/th//input"))
                .stream()
                .map(field -> field.getAttribute("value"))
                .toList();
    }

    private static List<WebElement> mainTableRows(WebDriver browser, String name) {
        return PayaraServerDomain.consoleTableRows(browser, name);
    }
}
