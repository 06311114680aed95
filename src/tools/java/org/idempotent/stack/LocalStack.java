package org.idempotent.stack;

import java.time.Duration;

/**
 * The run command ({@code mvn -Prun}): PostgreSQL (DB_HOST's when given, else one of the run's own, see
 * {@link RunDatabase}) with the database and roles created if missing, the Artemis broker distribution with its console
 * and a persistent journal, and Payara Micro with the RAR and the WAR, in the foreground. Ctrl-C stops all of it.
 */
public final class LocalStack {

    private LocalStack() {}

    public static void main(String[] args) throws Exception {
        Settings settings = Settings.fromEnvironment();
        PostgresCluster postgres = null;
        if (!RunDatabase.configured()) {
            postgres = RunDatabase.start(settings);
            settings = postgres.serve(settings);
            System.out.printf(
                    "Database: %s at 127.0.0.1:%d, data in %s (no DB_HOST given; set it to use another server)%n",
                    postgres.binaries().description(), postgres.port(), RunDatabase.root(settings));
            if (PostgresBinaries.runningAsRoot()) {
                System.out.printf(
                        "Running as root: the PostgreSQL server runs as the user '%s' (it refuses to run as root)%n",
                        PostgresBinaries.serverUser());
            }
        }
        PostgresCluster database = postgres;
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
        long started = System.nanoTime();
        PayaraMicroProcess micro = PayaraMicroProcess.start("payara-micro", settings, Build.WAR, true);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            micro.stop(Duration.ofSeconds(30));
            broker.stop(Duration.ofSeconds(30));
            if (database != null) {
                database.stop();
            }
        }));
        micro.awaitReady(Duration.ofMinutes(3));
        System.out.printf(
                "%nReady: consuming queues '%s' and '%s' with up to %s and %s sessions into %s (%.1f s after Payara"
                        + " Micro's start)%n"
                        + "Health: %s   Metrics: %s%nSend events: mvn -Pload   Stop: Ctrl-C%n%n",
                settings.get("PAYMENTS_QUEUE"),
                settings.get("REFUNDS_QUEUE"),
                settings.get("CONSUMER_MAX_SESSIONS"),
                settings.get("REFUNDS_MAX_SESSIONS"),
                settings.jdbcUrl(),
                (System.nanoTime() - started) / 1e9,
                micro.uri("/health/ready"),
                micro.uri("/metrics"));
        int exit = micro.waitFor();
        broker.stop(Duration.ofSeconds(30));
        if (database != null) {
            database.stop();
        }
        System.exit(exit);
    }
}
