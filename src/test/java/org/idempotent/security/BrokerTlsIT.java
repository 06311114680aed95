package org.idempotent.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.Session;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory;
import org.idempotent.fixtures.Ledger;
import org.idempotent.loadgen.PaymentProducer;
import org.idempotent.stack.BrokerProcess;
import org.idempotent.stack.Build;
import org.idempotent.stack.Commands;
import org.idempotent.stack.Database;
import org.idempotent.stack.FreePort;
import org.idempotent.stack.PayaraMicroProcess;
import org.idempotent.stack.Settings;
import org.junit.jupiter.api.Test;

/**
 * With a key store, the broker instance gets a TLS acceptor next to the plain one (create-instance.sh): a producer that
 * trusts the broker's certificate sends over it, the consumer (BROKER_SSL_ENABLED, its trust store, host verification)
 * consumes over it and applies the payment; a client speaking plain TCP to it gets nowhere.
 */
class BrokerTlsIT {

    private static final String STORE_PASSWORD = "tls-it-store";

    @Test
    void producerAndConsumerTalkToTheBrokerOverTlsOnly() throws Exception {
        Path dir = Path.of("target", "tls-it").toAbsolutePath();
        Commands.deleteRecursively(dir);
        Files.createDirectories(dir);
        Path keystore = dir.resolve("broker.p12");
        Path truststore = dir.resolve("clients.p12");
        keytool(
                "-genkeypair",
                "-alias",
                "broker",
                "-keyalg",
                "RSA",
                "-keysize",
                "2048",
                "-validity",
                "2",
                "-dname",
                "CN=localhost",
                "-ext",
                "SAN=dns:localhost,ip:127.0.0.1",
                "-storetype",
                "PKCS12",
                "-keystore",
                keystore.toString(),
                "-storepass",
                STORE_PASSWORD);
        keytool(
                "-exportcert",
                "-alias",
                "broker",
                "-keystore",
                keystore.toString(),
                "-storepass",
                STORE_PASSWORD,
                "-file",
                dir.resolve("broker.crt").toString());
        keytool(
                "-importcert",
                "-noprompt",
                "-alias",
                "broker",
                "-file",
                dir.resolve("broker.crt").toString(),
                "-storetype",
                "PKCS12",
                "-keystore",
                truststore.toString(),
                "-storepass",
                STORE_PASSWORD);
        int tlsPort = FreePort.find();
        Settings settings = Settings.fromEnvironment()
                .with("STACK_DIR", dir.resolve("stack").toString())
                .withFreeBrokerPorts()
                .with("BROKER_TLS_PORT", String.valueOf(tlsPort))
                .with("BROKER_TLS_KEYSTORE", keystore.toString())
                .with("BROKER_TLS_KEYSTORE_PASSWORD", STORE_PASSWORD)
                .with("DB_NAME", "payments_it_tls")
                .with("HTTP_PORT", String.valueOf(FreePort.find()));
        Database.recreate(settings);
        // The consumer reaches the broker at its TLS port only.
        Settings overTls = settings.with("BROKER_PORT", String.valueOf(tlsPort))
                .with("BROKER_SSL_ENABLED", "true")
                .with("BROKER_TRUSTSTORE", truststore.toString())
                .with("BROKER_TRUSTSTORE_PASSWORD", STORE_PASSWORD);

        try (BrokerProcess broker = BrokerProcess.start(settings, false);
                PayaraMicroProcess consumer = PayaraMicroProcess.startReady("tls-it", overTls, Build.WAR)) {
            String account = "tls-" + UUID.randomUUID();
            String tls = "tcp://localhost:" + tlsPort + "?sslEnabled=true&trustStorePath=" + truststore
                    + "&trustStorePassword=" + STORE_PASSWORD + "&trustStoreType=PKCS12&verifyHost=true";
            try (Connection producer = new ActiveMQConnectionFactory(
                            tls, settings.get("BROKER_PRODUCER_USER"), settings.get("BROKER_PRODUCER_PASSWORD"))
                    .createConnection()) {
                Session session = producer.createSession(false, Session.AUTO_ACKNOWLEDGE);
                session.createProducer(session.createQueue("payments"))
                        .send(session.createTextMessage(PaymentProducer.json(UUID.randomUUID(), account, 4242)));
            }
            Ledger ledger = new Ledger(settings);
            await().atMost(Duration.ofSeconds(60))
                    .untilAsserted(() -> assertThat(ledger.balance(account)).isEqualTo(4242));
            assertThat(Files.readString(broker.log()))
                    .contains("for protocols [CORE,AMQP,STOMP,OPENWIRE]")
                    .containsPattern("Started \\w+ Acceptor at 127.0.0.1:" + tlsPort);

            String plain =
                    "tcp://localhost:" + tlsPort + "?reconnectAttempts=0&initialConnectAttempts=1&callTimeout=5000";
            assertThatThrownBy(() -> new ActiveMQConnectionFactory(
                                    plain,
                                    settings.get("BROKER_PRODUCER_USER"),
                                    settings.get("BROKER_PRODUCER_PASSWORD"))
                            .createConnection()
                            .close())
                    .isInstanceOf(JMSException.class);
        }
    }

    private static void keytool(String... arguments) throws Exception {
        String[] command = new String[arguments.length + 1];
        command[0] = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        System.arraycopy(arguments, 0, command, 1, arguments.length);
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes());
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(out).isZero();
    }
}
