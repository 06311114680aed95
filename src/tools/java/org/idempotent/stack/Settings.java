package org.idempotent.stack;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The configuration keys of the product and their local defaults (those that work on a developer machine with
 * PostgreSQL at localhost, trust authentication). An environment variable of the same name wins.
 */
public final class Settings {

    private static final Map<String, String> DEFAULTS = new LinkedHashMap<>();

    static {
        DEFAULTS.put("DB_HOST", "localhost");
        DEFAULTS.put("DB_PORT", "5432");
        // The streaming standby of a primary/standby pair; empty: the same as DB_HOST / DB_PORT (one server).
        DEFAULTS.put("DB_STANDBY_HOST", "");
        DEFAULTS.put("DB_STANDBY_PORT", "");
        DEFAULTS.put("DB_NAME", "payments");
        DEFAULTS.put("DB_USER", "payments_app");
        DEFAULTS.put("DB_PASSWORD", "payments_app");
        DEFAULTS.put("DB_OWNER_USER", "postgres");
        DEFAULTS.put("DB_OWNER_PASSWORD", "postgres");
        DEFAULTS.put("DB_POOL_MAX", "16");
        DEFAULTS.put("BROKER_HOST", "localhost");
        DEFAULTS.put("BROKER_PORT", "61616");
        // The backup of a primary/backup broker pair; empty: the same as BROKER_HOST / BROKER_PORT (one broker).
        DEFAULTS.put("BROKER_BACKUP_HOST", "");
        DEFAULTS.put("BROKER_BACKUP_PORT", "");
        DEFAULTS.put("BROKER_USER", "payments");
        DEFAULTS.put("BROKER_PASSWORD", "payments");
        // The broker's other two users (server-config/artemis/create-instance.sh); the application never sees them.
        DEFAULTS.put("BROKER_PRODUCER_USER", "payments-producer");
        DEFAULTS.put("BROKER_PRODUCER_PASSWORD", "payments-producer");
        DEFAULTS.put("BROKER_OPERATOR_USER", "operator");
        DEFAULTS.put("BROKER_OPERATOR_PASSWORD", "operator");
        DEFAULTS.put("BROKER_CONSOLE_PORT", "8161");
        DEFAULTS.put("BROKER_METRICS_PORT", "9404");
        // A TLS acceptor only with a key store (create-instance.sh); none in development.
        DEFAULTS.put("BROKER_SSL_ENABLED", "false");
        DEFAULTS.put("BROKER_TRUSTSTORE", "none");
        DEFAULTS.put("BROKER_TRUSTSTORE_PASSWORD", "none");
        DEFAULTS.put("BROKER_TLS_PORT", "61617");
        DEFAULTS.put("BROKER_TLS_KEYSTORE", "");
        DEFAULTS.put("BROKER_TLS_KEYSTORE_PASSWORD", "");
        DEFAULTS.put("PAYMENTS_QUEUE", "payments");
        DEFAULTS.put("DEAD_LETTER_QUEUE", "payments.dlq");
        DEFAULTS.put("CONFLICTS_QUEUE", "payments.conflicts");
        DEFAULTS.put("QUARANTINE_QUEUE", "payments.quarantine");
        DEFAULTS.put("CONSUMER_MAX_SESSIONS", "8");
        DEFAULTS.put("CONSUMER_STUCK_SECONDS", "300");
        DEFAULTS.put("ADMIN_USER", "admin");
        DEFAULTS.put("ADMIN_PASSWORD", "admin");
        DEFAULTS.put("RETENTION_DAYS", "14");
        DEFAULTS.put("RETENTION_BATCH_SIZE", "5000");
        DEFAULTS.put("RETENTION_TIME_BUDGET_SECONDS", "300");
        DEFAULTS.put("RETENTION_SCHEDULE", "minute=*/15;hour=*");
        DEFAULTS.put("BROKER_MAX_DELIVERY_ATTEMPTS", "20");
        DEFAULTS.put("BROKER_MAX_REDELIVERY_DELAY_SECONDS", "300");
        DEFAULTS.put("ANNOUNCEMENT_ADDRESS", "payments.applied");
        DEFAULTS.put("ANNOUNCEMENT_RETENTION_DAYS", "7");
        DEFAULTS.put("DLQ_REPLAY_DAYS", "7");
        // The run command and the tests are development: their passwords are the defaults above.
        DEFAULTS.put("PAYMENTS_DEVELOPMENT", "true");
        DEFAULTS.put("HTTP_PORT", "8080");
        DEFAULTS.put("STACK_DIR", "target/stack");
    }

    /** Keys whose empty value stands for another key's value. */
    private static final Map<String, String> FOLLOWS = Map.of(
            "BROKER_BACKUP_HOST", "BROKER_HOST",
            "BROKER_BACKUP_PORT", "BROKER_PORT",
            "DB_STANDBY_HOST", "DB_HOST",
            "DB_STANDBY_PORT", "DB_PORT");

    private final Map<String, String> values;

    private Settings(Map<String, String> values) {
        this.values = values;
    }

    public static Settings fromEnvironment() {
        Map<String, String> values = new LinkedHashMap<>();
        DEFAULTS.forEach((key, fallback) -> values.put(key, System.getenv().getOrDefault(key, fallback)));
        return new Settings(values);
    }

    /** A copy with one value replaced, e.g. another HTTP port for a second instance. */
    public Settings with(String key, String value) {
        if (!DEFAULTS.containsKey(key)) {
            throw new IllegalArgumentException("unknown setting " + key);
        }
        Map<String, String> copy = new LinkedHashMap<>(values);
        copy.put(key, value);
        return new Settings(copy);
    }

    /** A copy for a broker of its own: every port a broker instance listens on, free ones (acceptor, console, metrics). */
    public Settings withFreeBrokerPorts() {
        return with("BROKER_PORT", String.valueOf(FreePort.find()))
                .with("BROKER_CONSOLE_PORT", String.valueOf(FreePort.find()))
                .with("BROKER_METRICS_PORT", String.valueOf(FreePort.find()));
    }

    public String get(String key) {
        String value = values.get(key);
        if (value == null) {
            throw new IllegalArgumentException("unknown setting " + key);
        }
        return value.isEmpty() && FOLLOWS.containsKey(key) ? get(FOLLOWS.get(key)) : value;
    }

    public int getInt(String key) {
        return Integer.parseInt(get(key));
    }

    public Path stackDir() {
        return Path.of(get("STACK_DIR")).toAbsolutePath();
    }

    public String jdbcUrl() {
        return jdbcUrl(get("DB_NAME"));
    }

    /** Both servers of a primary/standby pair (one server twice without one): the connection goes to the primary. */
    public String jdbcUrl(String database) {
        return "jdbc:postgresql://" + get("DB_HOST") + ":" + get("DB_PORT") + "," + get("DB_STANDBY_HOST") + ":"
                + get("DB_STANDBY_PORT") + "/" + database + "?targetServerType=primary";
    }

    public String brokerUrl() {
        return "tcp://" + get("BROKER_HOST") + ":" + get("BROKER_PORT");
    }

    /**
     * A client URL that follows the live broker of a pair (the same as {@link #brokerUrl} with a single broker):
     * both connectors, HA, reconnecting for ever.
     */
    public String brokerHaUrl() {
        return "(tcp://" + get("BROKER_HOST") + ":" + get("BROKER_PORT") + ",tcp://" + get("BROKER_BACKUP_HOST") + ":"
                + get("BROKER_BACKUP_PORT") + ")?ha=true&reconnectAttempts=-1&retryInterval=500";
    }

    /** Every key with its value: the environment a child process (broker, Payara Micro) is started with. */
    public Map<String, String> asEnvironment() {
        Map<String, String> environment = new LinkedHashMap<>();
        values.keySet().forEach(key -> environment.put(key, get(key)));
        return Map.copyOf(environment);
    }

    /**
     * The values set in the environment or by {@link #with}: everything but the untouched local defaults (a key that
     * follows another is changed with it, and given as the value it stands for).
     */
    public Map<String, String> changedFromDefaults() {
        Map<String, String> changed = new LinkedHashMap<>();
        values.forEach((key, value) -> {
            if (System.getenv(key) != null || !value.equals(DEFAULTS.get(key))) {
                changed.put(key, get(key));
            }
        });
        FOLLOWS.forEach((key, followed) -> {
            if (changed.containsKey(followed)) {
                changed.putIfAbsent(key, get(key));
            }
        });
        return changed;
    }

    /** Every key's local default, a key that follows another given as the value it stands for. */
    public static Map<String, String> defaults() {
        return new Settings(DEFAULTS).asEnvironment();
    }
}
