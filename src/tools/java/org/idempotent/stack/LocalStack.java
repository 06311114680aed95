package org.idempotent.stack;

import java.time.Duration;

/**
 * The run command ({@code mvn -Prun}): PostgreSQL database (created if missing), an Artemis broker with a persistent
 * journal, and Payara Micro with the RAR and the WAR, in the foreground. Ctrl-C stops all of it.
 */
public final class LocalStack {

    private LocalStack() {}

    public static void main(String[] args) throws Exception {
        Settings settings = Settings.fromEnvironment();
        Database.ensureExists(settings);
        BrokerProcess broker = BrokerProcess.start(settings, false);
        System.out.printf("Broker: %s (log %s)%n", settings.brokerUrl(), broker.log());
        PayaraMicroProcess micro = PayaraMicroProcess.start("payara-micro", settings, Build.WAR, true);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            micro.stop(Duration.ofSeconds(30));
            broker.stop(Duration.ofSeconds(30));
        }));
        micro.awaitReady(Duration.ofMinutes(3));
        System.out.printf("%nReady: consuming queue '%s' with up to %s sessions into %s%n"
                + "Health: %s   Metrics: %s%nSend events: mvn -Pload   Stop: Ctrl-C%n%n",
                settings.get("PAYMENTS_QUEUE"), settings.get("CONSUMER_MAX_SESSIONS"), settings.jdbcUrl(),
                micro.uri("/health/ready"), micro.uri("/metrics"));
        int exit = micro.waitFor();
        broker.stop(Duration.ofSeconds(30));
        System.exit(exit);
    }
}
