package org.idempotent.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.idempotent.fixtures.Ledger;
import org.idempotent.fixtures.PrometheusServer;
import org.idempotent.loadgen.PaymentProducer;
import org.idempotent.stack.Build;
import org.idempotent.stack.Commands;
import org.idempotent.stack.Database;
import org.idempotent.stack.FreePort;
import org.idempotent.stack.PayaraMicroProcess;
import org.idempotent.stack.PostgresBinaries;
import org.idempotent.stack.PostgresCluster;
import org.idempotent.stack.Settings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * TLS to PostgreSQL with {@code DB_SSL_MODE=verify-full}, against a server of its own that turns away every client
 * not speaking TLS, its certificate (for {@code localhost}) signed by a CA made for the test: the consumer migrates
 * and applies a payment through both of its pools, the run command's tools create the database; a client that
 * trusts another CA, or reaches the server by a name its certificate does not carry, is refused.
 */
class DatabaseTlsIT {

    private static final Path DIR = Path.of("target", "db-tls-it").toAbsolutePath();
    private static final Path CERTS = DIR.resolve("certs");

    private static PostgresCluster server;
    private static Settings verified;

    @BeforeAll
    static void aServerThatSpeaksTlsOnly() throws Exception {
        Commands.deleteRecursively(DIR);
        Files.createDirectories(CERTS);
        authority("ca");
        authority("other-ca");
        openssl(
                "req",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                file("server.key"),
                "-out",
                file("server.csr"),
                "-subj",
                "/CN=localhost");
        Files.writeString(CERTS.resolve("server.ext"), "subjectAltName=DNS:localhost\n");
        openssl(
                "x509",
                "-req",
                "-in",
                file("server.csr"),
                "-CA",
                file("ca.crt"),
                "-CAkey",
                file("ca.key"),
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                file("server.ext"),
                "-out",
                file("server.crt"));
        if (PostgresBinaries.runningAsRoot()) {
            // The server reads its key as the user it runs as, and refuses a key others may read.
            Commands.run(List.of("chown", "-R", PostgresBinaries.serverUser(), CERTS.toString()), Map.of());
        }
        server = PostgresCluster.create(
                DIR.resolve("postgres"),
                List.of(
                        "ssl = on",
                        "ssl_cert_file = '" + file("server.crt") + "'",
                        "ssl_key_file = '" + file("server.key") + "'"));
        server.refusePlainConnections();
        verified = server.serve(Settings.fromEnvironment())
                .with("DB_HOST", "localhost")
                .with("DB_STANDBY_HOST", "localhost")
                .with("DB_NAME", "payments_it_db_tls")
                .with("DB_SSL_MODE", "verify-full")
                .with("DB_SSL_ROOT_CERT", file("ca.crt"));
        Settings plain = verified.with("DB_SSL_MODE", "disable");
        // A reload is a signal: the server reads its new pg_hba.conf a moment later.
        await().atMost(Duration.ofSeconds(10)).until(() -> refused(plain));
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void verifyFullReachesTheServerItsCaSignedForThatName() throws Exception {
        try (Connection connection = superuser(verified);
                Statement query = connection.createStatement();
                ResultSet row =
                        query.executeQuery("SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()")) {
            assertThat(row.next()).isTrue();
            assertThat(row.getBoolean(1)).as("encrypted").isTrue();
            assertThat(row.getString(2)).startsWith("TLSv1.");
        }
    }

    @Test
    void aServerSignedByAnotherCaIsRefused() {
        Settings trustingAnother = verified.with("DB_SSL_ROOT_CERT", file("other-ca.crt"));
        assertThatThrownBy(() -> superuser(trustingAnother).close())
                .isInstanceOf(SQLException.class)
                .hasMessageContaining("SSL error")
                .hasStackTraceContaining("PKIX path building failed");
    }

    @Test
    void aServerReachedByANameItsCertificateDoesNotCarryIsRefused() {
        Settings byAddress = verified.with("DB_HOST", "127.0.0.1").with("DB_STANDBY_HOST", "127.0.0.1");
        assertThatThrownBy(() -> superuser(byAddress).close())
                .isInstanceOf(SQLException.class)
                .hasMessageContaining("hostname 127.0.0.1 could not be verified");
    }

    @Test
    void theServerTurnsAwayAClientWithoutTls() {
        assertThat(refused(verified.with("DB_SSL_MODE", "disable"))).isTrue();
    }

    @Test
    void theConsumerMigratesAndAppliesAPaymentOverVerifiedTls() throws Exception {
        Database.recreate(verified);
        String account = "db-tls-" + UUID.randomUUID().toString().substring(0, 8);
        Settings consumer = consumer(verified);
        try (PayaraMicroProcess micro = PayaraMicroProcess.startReady("db-tls-it", consumer, Build.WAR)) {
            try (PaymentProducer producer = new PaymentProducer(consumer)) {
                producer.sendText(PaymentProducer.json(UUID.randomUUID(), account, 4242));
            }
            Ledger ledger = new Ledger(verified);
            await().atMost(Duration.ofSeconds(60))
                    .untilAsserted(() -> assertThat(ledger.balance(account)).isEqualTo(4242));
            assertThat(sessionsOf(List.of(verified.get("DB_USER"))))
                    .as("the application's connections, each encrypted")
                    .isNotEmpty()
                    .containsOnly(true);
        }
    }

    /**
     * The pools verify what they were told to: the same consumer, trusting another CA, refuses the server's certificate
     * (the server logs the client's alert) and never gets a connection. Its deployment fails at the schema's migration,
     * and Payara goes on without it, which the shipped alert rules see: PaymentConsumerApplicationMissing fires.
     */
    @Test
    void aConsumerTrustingAnotherCaRefusesTheServerAndGetsNoConnection() throws Exception {
        Database.recreate(verified);
        Settings trustingAnother = consumer(verified.with("DB_SSL_ROOT_CERT", file("other-ca.crt")));
        long refusedBefore = refusedHandshakes();
        try (PayaraMicroProcess micro =
                        PayaraMicroProcess.start("db-tls-other-ca-it", trustingAnother, Build.WAR, false);
                PrometheusServer prometheus = PrometheusServer.start(
                        DIR.resolve("prometheus"),
                        Map.of(
                                "payment-consumer", "127.0.0.1:" + trustingAnother.get("HTTP_PORT"),
                                "payments-broker", "127.0.0.1:" + trustingAnother.get("BROKER_METRICS_PORT")))) {
            await().atMost(Duration.ofMinutes(2))
                    .pollInterval(Duration.ofSeconds(1))
                    .until(() -> refusedHandshakes() > refusedBefore);
            assertThat(sessionsOf(List.of(verified.get("DB_USER"), verified.get("DB_OWNER_USER"))))
                    .as("sessions of the application's roles")
                    .isEmpty();
            await().atMost(Duration.ofMinutes(2))
                    .untilAsserted(() -> assertThat(prometheus.firing()).contains("PaymentConsumerApplicationMissing"));
            // The consumer's own log names the cause, not only the driver's "Could not find a server".
            assertThat(Files.readString(micro.log()))
                    .contains("occurred while connecting to localhost:" + verified.get("DB_PORT"))
                    .contains("PKIX path building failed");
        }
    }

    /** Handshakes the server saw a client end because it did not trust the server's certificate. */
    private static long refusedHandshakes() throws IOException {
        return Files.readAllLines(server.log()).stream()
                .filter(line ->
                        line.contains("could not accept SSL connection") && line.contains("certificate unknown"))
                .count();
    }

    private static Settings consumer(Settings database) {
        return database.with("PAYMENTS_QUEUE", "it.db-tls")
                .with("REFUNDS_QUEUE", "it.db-tls.refunds")
                .with("HTTP_PORT", String.valueOf(FreePort.find()));
    }

    /** Whether each session of these roles is encrypted. */
    private static List<Boolean> sessionsOf(List<String> roles) throws SQLException {
        List<Boolean> encrypted = new ArrayList<>();
        try (Connection connection = superuser(verified);
                PreparedStatement query = connection.prepareStatement(
                        "SELECT s.ssl FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid)"
                                + " WHERE a.usename = ANY (?) AND a.pid <> pg_backend_pid()")) {
            query.setArray(1, connection.createArrayOf("text", roles.toArray()));
            try (ResultSet rows = query.executeQuery()) {
                while (rows.next()) {
                    encrypted.add(rows.getBoolean(1));
                }
            }
        }
        return encrypted;
    }

    private static boolean refused(Settings settings) {
        try {
            superuser(settings).close();
            return false;
        } catch (SQLException e) {
            return e.getMessage().contains("no encryption");
        }
    }

    private static Connection superuser(Settings settings) throws SQLException {
        return DriverManager.getConnection(settings.jdbcUrl("postgres"), PostgresCluster.SUPERUSER, "");
    }

    /** A self-signed CA, {@code name}.key and {@code name}.crt. */
    private static void authority(String name) {
        openssl(
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                file(name + ".key"),
                "-out",
                file(name + ".crt"),
                "-days",
                "2",
                "-subj",
                "/CN=payments test " + name);
    }

    private static String file(String name) {
        return CERTS.resolve(name).toString();
    }

    private static void openssl(String... arguments) {
        List<String> command = new ArrayList<>(List.of("openssl"));
        command.addAll(List.of(arguments));
        Commands.run(command, Map.of());
    }
}
