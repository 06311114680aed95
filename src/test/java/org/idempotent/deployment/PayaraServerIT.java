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
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.idempotent.fixtures.HeadlessChromium;
import org.idempotent.fixtures.Ledger;
import org.idempotent.fixtures.PurgeWatch;
import org.idempotent.fixtures.SideBySide;
import org.idempotent.loadgen.PaymentProducer;
import org.idempotent.stack.AdminClient;
import org.idempotent.stack.ChildProcess;
import org.idempotent.stack.Commands;
import org.idempotent.stack.Database;
import org.idempotent.stack.FreePort;
import org.idempotent.stack.InstanceMetrics;
import org.idempotent.stack.PayaraInstance;
import org.idempotent.stack.PostgresCluster;
import org.idempotent.stack.Settings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.openqa.selenium.By;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;

/**
 * The product on full Payara Server 6, set up from scratch by server-config/setup-payara-server.sh in a fresh domain:
 * first on the DAS itself (the script's default target), where events flow through the broker into the database and the
 * script converges when run again; then, in the same domain, as a deployment group ({@link AsADeploymentGroup}), whose
 * setup takes the application off the DAS. One domain for both: its creation, start and stop are a minute of the test
 * run, and the admin console, checked last, lists what both setups created.
 */
@Order(SideBySide.FIRST)
@Execution(ExecutionMode.CONCURRENT)
@ResourceLock(SideBySide.LANE)
@ResourceLock(SideBySide.FAULT_TIMING)
class PayaraServerIT {

    private static final Path GUIDE = Path.of("target", "payara-server-guide").toAbsolutePath();
    /** Where step 3's broker instance goes instead of the page's /var/lib/payments-broker. */
    private static final Path BROKER_INSTANCE = GUIDE.resolve("broker");

    private static final Duration PATIENCE = Duration.ofMinutes(2);
    /** Step 6's events: the page's 2,000 take 20 s more and show nothing 400 do not. */
    private static final int LOAD_EVENTS = 400;
    /** Every setting the application reads (server-config/configuration.properties): each a domain property after the setup. */
    private static final List<String> CONFIG_KEYS = List.of(
            "PAYMENTS_QUEUE",
            "REFUNDS_QUEUE",
            "DEAD_LETTER_QUEUE",
            "CONFLICTS_QUEUE",
            "QUARANTINE_QUEUE",
            "CONSUMER_MAX_SESSIONS",
            "REFUNDS_MAX_SESSIONS",
            "CONSUMER_WINDOW_BYTES",
            "CONSUMER_REBALANCE_CONNECTIONS",
            "CONSUMER_STUCK_SECONDS",
            "DEDUP_PARTITIONING",
            "RETENTION_DAYS",
            "RETENTION_BATCH_SIZE",
            "RETENTION_TIME_BUDGET_SECONDS",
            "RETENTION_ROWS_PER_SECOND",
            "RETENTION_WAL_BYTES_PER_SECOND",
            "RETENTION_SCHEDULE",
            "BROKER_MAX_DELIVERY_ATTEMPTS",
            "BROKER_MAX_REDELIVERY_DELAY_SECONDS",
            "DEFERRED_DELIVERIES_MAX",
            "DLQ_REPLAY_DAYS",
            "ANNOUNCEMENT_ADDRESS",
            "ANNOUNCEMENT_RETENTION_DAYS",
            "ANNOUNCEMENT_PURGE_SCHEDULE");

    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private static Settings settings;
    private static PostgresCluster database;
    private static boolean brokerStarted;
    private static PayaraServerDomain domain;
    private static PayaraInstance server;
    private static String missingDatabaseSetup;
    private static String secondSetup;
    private static String load;
    private static String health;
    private static DeploymentGuide guide;

    /**
     * deployment.md's steps 1 to 7, read from the page and run in order as written (DeploymentGuide says what is
     * replaced), against a PostgreSQL of the test's own that asks every client for its password: Payara Server and
     * Artemis from Maven Central, the domain, the broker, the database and its roles, the setup (first with a
     * database that is not there, then twice), the load generator's events and the health checks.
     */
    @BeforeAll
    static void followTheGuide() throws Exception {
        Commands.deleteRecursively(GUIDE);
        Files.createDirectories(GUIDE);
        Map<String, String> passwords = new HashMap<>();
        database = PostgresCluster.create(GUIDE.resolve("postgres"), List.of());
        database.requirePasswords(password(passwords, "PGPASSWORD"));
        // A reload is a signal: the server asks for passwords a moment later, and from then on turns a wrong one away.
        await().atMost(Duration.ofSeconds(10)).until(() -> refusesTheWrongPassword(database.port()));
        int portBase = PayaraServerDomain.freePortBase(14800);
        int brokerPort = FreePort.find();
        guide = DeploymentGuide.read()
                .replace("(?<![^\\s=])/opt(?![^/\\s])", GUIDE.resolve("opt").toString())
                .replace("/var/lib/payments-broker", BROKER_INSTANCE.toString())
                .replace("\\b270(\\d\\d)\\b", port -> String.valueOf(portBase + Integer.parseInt(port.group(1))))
                .replace("\\b(db|mq)\\.internal\\b", "127.0.0.1")
                .replace("(?<=PGPORT=|DB_PORT=)5432\\b", String.valueOf(database.port()))
                .replace("(?<=BROKER_PORT=)61616\\b", String.valueOf(brokerPort))
                .replace(
                        "\\b(\\w*PASSWORD)=\\.\\.\\.", name -> name.group(1) + "=" + password(passwords, name.group(1)))
                .replace("--count 2000\\b", "--count " + LOAD_EVENTS);
        Map<String, String> shell = new HashMap<>();
        for (String name : List.of("PATH", "HOME")) {
            shell.put(name, System.getenv().getOrDefault(name, ""));
        }
        shell.put("JAVA_HOME", System.getProperty("java.home"));
        // Every JVM the steps start (asadmin, the domain, Maven, the broker) compiles with C1 only, as the tests' other
        // JVMs do; the page's text stays as written.
        shell.put("JAVA_TOOL_OPTIONS", String.join(" ", ChildProcess.extraJvmOptions()));

        guide.run(1, shell);
        guide.run(2, shell);
        domain = PayaraServerDomain.adopt(GUIDE.resolve("opt").resolve("payara7"), portBase);
        server = path -> URI.create("http://localhost:" + domain.httpPort() + path);
        // The admin console is deployed on its first request and takes tens of seconds: asked now, it loads while the
        // setups run, and the console check at the end finds it ready.
        HTTP.sendAsync(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + domain.adminPort() + "/"))
                        .build(),
                HttpResponse.BodyHandlers.discarding());
        // The console and metrics ports the page leaves at their defaults, which a developer's running broker holds.
        Map<String, String> brokerShell = new HashMap<>(shell);
        brokerShell.put("BROKER_CONSOLE_PORT", String.valueOf(FreePort.find()));
        brokerShell.put("BROKER_METRICS_PORT", String.valueOf(FreePort.find()));
        guide.run(3, brokerShell);
        brokerStarted = true;
        await().atMost(PATIENCE).until(() -> PostgresCluster.listening("127.0.0.1", brokerPort));
        guide.run(4, shell);

        // Step 5 first against a database that is not there: it stops before deploying and names the reason.
        Map<String, String> missingDatabase = new HashMap<>(shell);
        missingDatabase.put("DB_NAME", "payments_it_server_missing");
        missingDatabaseSetup = assertThrows(IllegalStateException.class, () -> guide.run(5, missingDatabase))
                .getMessage();
        guide.run(5, shell);
        // Run again on the domain it just set up: it converges, and exits 0.
        secondSetup = guide.run(5, shell);
        load = guide.run(6, shell);
        health = guide.run(7, shell);

        settings = database.serve(Settings.fromEnvironment())
                .with("DB_NAME", "payments")
                .with("DB_OWNER_USER", "payments_owner")
                .with("DB_OWNER_PASSWORD", passwords.get("DB_OWNER_PASSWORD"))
                .with("BROKER_HOST", "127.0.0.1")
                .with("BROKER_PORT", String.valueOf(brokerPort))
                .with("BROKER_PRODUCER_PASSWORD", passwords.get("BROKER_PRODUCER_PASSWORD"))
                .with("ADMIN_PASSWORD", passwords.get("ADMIN_PASSWORD"))
                .with("PAYMENTS_QUEUE", "payments")
                .with("REFUNDS_QUEUE", "refunds");
    }

    private static boolean refusesTheWrongPassword(int port) {
        try (Connection ignored = DriverManager.getConnection(
                "jdbc:postgresql://127.0.0.1:" + port + "/postgres", PostgresCluster.SUPERUSER, "not-the-password")) {
            return false;
        } catch (SQLException refused) {
            return true;
        }
    }

    /** The page's {@code name=...}: a password of the test's choosing, the same wherever the page names it. */
    private static String password(Map<String, String> passwords, String name) {
        return passwords.computeIfAbsent(
                name,
                unused -> name.toLowerCase().replace('_', '-') + "-"
                        + UUID.randomUUID().toString().substring(0, 8));
    }

    @AfterAll
    static void stopDomain() throws Exception {
        try {
            if (domain != null) {
                domain.close();
            }
        } finally {
            if (brokerStarted) {
                Commands.run(
                        List.of(
                                BROKER_INSTANCE
                                        .resolve("bin")
                                        .resolve("artemis-service")
                                        .toString(),
                                "stop"),
                        Map.of());
            }
            if (database != null) {
                database.close();
            }
        }
    }

    /** Step 6's load generator: every event applied once, the balances exact, as the schema's owner with a password. */
    @Test
    void theGuidesEventsEndWithExactBalances() {
        assertThat(load).contains(" 0 wrong", "-> EXACT");
    }

    /** The distributions the page's steps download are the ones the build and its tests use. */
    @Test
    void theGuideDownloadsTheVersionsTheBuildTests() {
        assertThat(guide.written(1))
                .contains("fish.payara.distributions:payara:" + System.getProperty("payara.server.version") + ":zip");
        assertThat(guide.written(3))
                .contains("org.apache.activemq:apache-artemis:" + System.getProperty("artemis.broker.version")
                        + ":zip:bin");
    }

    /** Step 7's health checks answered 200, each naming its checks. */
    @Test
    void theGuidesHealthChecksAnswer() {
        assertThat(health).contains("\"status\":\"UP\"", "payment-consumer");
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

    /** And names PostgreSQL's own reason, for each role, not the driver's "Could not find a server". */
    @Test
    void theSetupStopsBeforeDeployingWhenTheDatabaseDoesNotExist() {
        assertThat(missingDatabaseSetup)
                .contains("payments_it_server_missing", "does not answer", "createdb")
                .containsPattern(
                        "As the application's role \\S+: FATAL: database \"payments_it_server_missing\" does not"
                                + " exist\\.")
                .containsPattern("As the schema's owner \\S+: FATAL: database \"payments_it_server_missing\" does not"
                        + " exist\\.")
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

    /**
     * The same domain as a deployment group: one DAS, two standalone instances in the group, set up by
     * setup-payara-server.sh with TARGET naming the group (which takes the application off the DAS). Both instances
     * consume the queue; the retention purge runs once at a time across them; the admin console shows the group, its
     * instances and the application deployed to it, and the resources of both setups.
     */
    @Nested
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class AsADeploymentGroup {

        private static final String GROUP = "payments-group";
        private static final List<String> INSTANCES = List.of("payments-1", "payments-2");

        private Settings groupSettings;
        private final Map<String, PayaraInstance> instances = new HashMap<>();

        @BeforeAll
        void setUpTheGroup() throws Exception {
            groupSettings = Settings.fromEnvironment()
                    .with("DB_NAME", "payments_it_group")
                    .with("PAYMENTS_QUEUE", "it.group")
                    .with("RETENTION_SCHEDULE", "second=*/5;minute=*;hour=*")
                    // Small batches: a purge long enough to be seen at work, batch after batch.
                    .with("RETENTION_BATCH_SIZE", "100");
            Database.recreate(groupSettings);
            domain.createDeploymentGroup(GROUP, INSTANCES)
                    .forEach(
                            (name, port) -> instances.put(name, path -> URI.create("http://localhost:" + port + path)));
            Map<String, String> environment = domain.setupEnvironment(groupSettings);
            environment.put("TARGET", GROUP);
            Commands.run(List.of("server-config/setup-payara-server.sh"), environment);
            for (PayaraInstance instance : instances.values()) {
                await().atMost(PATIENCE.multipliedBy(2))
                        .ignoreExceptions()
                        .untilAsserted(() -> assertThat(HTTP.send(
                                                HttpRequest.newBuilder(instance.uri("/health/ready"))
                                                        .build(),
                                                HttpResponse.BodyHandlers.ofString())
                                        .statusCode())
                                .isEqualTo(200));
            }
        }

        @Test
        void bothInstancesOfTheGroupConsumeAndEachEventIsAppliedOnce() throws Exception {
            String account = "group-" + UUID.randomUUID().toString().substring(0, 8);
            try (PaymentProducer producer = new PaymentProducer(groupSettings)) {
                for (int i = 0; i < 200; i++) {
                    UUID event = UUID.randomUUID();
                    for (int copy = 0; copy < 3; copy++) {
                        producer.sendText(PaymentProducer.json(event, account, 100));
                    }
                }
            }

            Ledger ledger = new Ledger(groupSettings);
            await().atMost(PATIENCE)
                    .untilAsserted(() -> assertThat(ledger.balance(account)).isEqualTo(200 * 100));
            long applied = 0;
            for (String name : INSTANCES) {
                long appliedThere = new InstanceMetrics(instances.get(name)).outcome("applied");
                assertThat(appliedThere).as("%s applied some", name).isPositive();
                applied += appliedThere;
            }
            assertThat(applied).as("each event applied once, across the group").isEqualTo(200);
        }

        @Test
        void theRetentionPurgeRunsOnceAtATimeAcrossTheGroup() throws Exception {
            // 200 batches, seconds of purging; both instances' timers fire on the same 5-second ticks, so each tick
            // is a race for the lock.
            PurgeWatch.insertExpired(groupSettings, 20_000);
            PurgeWatch.Seen seen = PurgeWatch.watch(groupSettings, Duration.ofMinutes(1));

            assertThat(seen.expiredLeft()).as("every expired row purged").isZero();
            assertThat(seen.samplesAtWork()).as("purges observed at work").isPositive();
            assertThat(seen.most())
                    .as("purges at work at the same moment, across the group")
                    .isEqualTo(1);
        }

        @Test
        void theAdminConsoleShowsTheGroupItsInstancesTheApplicationAndItsResources() throws Exception {
            WebDriver browser = HeadlessChromium.start();
            try {
                String console = "http://127.0.0.1:" + domain.adminPort();
                HeadlessChromium.openConsole(
                        browser,
                        console + "/dg/dgs.jsf",
                        page -> !mainTableRows(page, GROUP).isEmpty(),
                        PATIENCE);
                HeadlessChromium.screenshot(browser, "payara-server-deployment-groups");
                browser.get(console + "/dg/dgInstances.jsf?dgName=" + GROUP);
                await().atMost(Duration.ofSeconds(30))
                        .ignoreExceptions()
                        .until(() -> INSTANCES.stream()
                                .allMatch(name -> !mainTableRows(browser, name).isEmpty()));
                HeadlessChromium.screenshot(browser, "payara-server-deployment-group-instances");
                for (String name : INSTANCES) {
                    assertThat(mainTableRows(browser, name).get(0).getText())
                            .as(name)
                            .contains("Running");
                }
                assertListed(
                        browser,
                        console + "/dg/dgApplications.jsf?dgName=" + GROUP,
                        "payment-consumer",
                        "deployment-group-applications");
                assertResourcesListed(browser, console);
            } finally {
                browser.quit();
            }
        }
    }

    /** What the setups created, as the console lists it: the application, its resources, every setting. */
    private static void assertResourcesListed(WebDriver browser, String console) throws Exception {
        assertListed(browser, console + "/common/applications/applications.jsf", "payment-consumer", "applications");
        assertListed(browser, console + "/jdbc/jdbcConnectionPools.jsf", "payments-pool", "jdbc-pools");
        assertListed(browser, console + "/jdbc/jdbcResources.jsf", "jdbc/payments", "jdbc-resources");
        assertListed(browser, console + "/jca/resourceAdapterConfigs.jsf", "artemis-ra", "resource-adapters");
        assertListed(browser, console + "/jca/connectorConnectionPools.jsf", "payments-jms-pool", "connector-pools");
        assertListed(
                browser,
                console + "/jca/connectorResources.jsf",
                "jms/paymentsConnectionFactory",
                "connector-resources");
        // Configurations > server-config > MicroProfile > Config, Property tab, source "domain": every key, each in an
        // editable name field of the page's property table.
        browser.get(console + "/microprofile/microprofile/specs/configAPI/propertyConfiguration.jsf"
                + "?source=domain&configName=server-config");
        await().atMost(Duration.ofSeconds(30))
                .ignoreExceptions()
                .until(() -> !propertyNames(browser).isEmpty());
        HeadlessChromium.screenshot(browser, "payara-server-microprofile-config");
        assertThat(propertyNames(browser))
                .as("the domain's MicroProfile Config properties")
                .containsAll(CONFIG_KEYS);
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
