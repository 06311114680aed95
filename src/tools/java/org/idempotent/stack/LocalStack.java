package org.idempotent.stack;

import java.time.Duration;

/**
 * The run command ({@code mvn -Prun}): PostgreSQL database (created if missing), the Artemis broker distribution with
 * its console and a persistent journal, and Payara Micro with the RAR and the WAR, in the foreground. Ctrl-C stops all of it.
 */
public final class LocalStack {

    private LocalStack() {}

    public static void main(String[] args) throws Exception {
        Settings settings = Settings.fromEnvironment();
        Database.ensureExists(settings);
        BrokerProcess broker = BrokerProcess.start(settings, false);
        System.out.printf(
                "Broker: Artemis %s at %s for CORE, AMQP, STOMP and OpenWire (instance %s, log %s)%n"
                        + "Broker console: http://127.0.0.1:%s/console (user %s)%n",
                Build.artemisHome().getFileName(),
                settings.brokerUrl(),
                settings.stackDir().resolve("broker"),
                broker.log(),
                settings.get("BROKER_CONSOLE_PORT"),
                settings.get("BROKER_OPERATOR_USER"));
        PayaraMicroProcess micro = PayaraMicroProcess.start("payara-micro", settings, Build.WAR, true);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            micro.stop(Duration.ofSeconds(30));
            broker.stop(Duration.ofSeconds(30));
        }));
        micro.awaitReady(Duration.ofMinutes(3));
        System.out.printf(
                "%nReady: consuming queue '%s' with up to %s sessions into %s%n"
                        + "Health: %s   Metrics: %s%nSend events: mvn -Pload   Stop: Ctrl-C%n%n",
                settings.get("PAYMENTS_QUEUE"),
                settings.get("CONSUMER_MAX_SESSIONS"),
                settings.jdbcUrl(),
                micro.uri("/health/ready"),
                micro.uri("/metrics"));
        int exit = micro.waitFor();
        broker.stop(Duration.ofSeconds(30));
        System.exit(exit);
    }
}
