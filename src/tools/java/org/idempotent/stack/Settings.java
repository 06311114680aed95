package org.idempotent.stack;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The configuration keys of the product and their local defaults, as {@link Build#CONFIGURATION} writes them (those
 * that work on a developer machine with PostgreSQL at localhost, trust authentication). An environment variable of the
 * same name wins. The run command and the tests are development: PAYMENTS_DEVELOPMENT is true here.
 */
public final class Settings {

    /** {@code ${NAME}} as a default: the value of NAME. */
    private static final Pattern REFERENCE = Pattern.compile("\\$\\{([A-Z_]+)}");

    private static final Map<String, String> DEFAULTS = new LinkedHashMap<>();
    /** Keys whose default is another key's value (a standby is its primary, with one server). */
    private static final Map<String, String> FOLLOWS = new LinkedHashMap<>();

    static {
        configuration().forEach((key, value) -> {
            Matcher reference = REFERENCE.matcher(value);
            if (reference.matches()) {
                FOLLOWS.put(key, reference.group(1));
                DEFAULTS.put(key, "");
            } else {
                DEFAULTS.put(key, value);
            }
        });
        DEFAULTS.put("PAYMENTS_DEVELOPMENT", "true");
    }

    /** Every key of {@link Build#CONFIGURATION} as it is written there, in its order. */
    public static Map<String, String> configuration() {
        Map<String, String> written = new LinkedHashMap<>();
        try {
            for (String line : Files.readAllLines(Build.CONFIGURATION)) {
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                int equals = line.indexOf('=');
                if (equals < 1 || written.put(line.substring(0, equals), line.substring(equals + 1)) != null) {
                    throw new IllegalStateException(Build.CONFIGURATION + ": not KEY=value, or a key twice: " + line);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return written;
    }

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

    /**
     * The primary, then its standby when there is one (a standby that is the primary itself, as with one server, is not
     * listed again): the connection goes to whichever takes writes.
     */
    public String jdbcUrl(String database) {
        String primary = get("DB_HOST") + ":" + get("DB_PORT");
        String standby = get("DB_STANDBY_HOST") + ":" + get("DB_STANDBY_PORT");
        String servers = standby.equals(primary) ? primary : primary + "," + standby;
        return "jdbc:postgresql://" + servers + "/" + database + "?targetServerType=primary&sslmode="
                + URLEncoder.encode(get("DB_SSL_MODE"), StandardCharsets.UTF_8) + "&sslrootcert="
                + URLEncoder.encode(get("DB_SSL_ROOT_CERT"), StandardCharsets.UTF_8);
    }

    public String brokerUrl() {
        return "tcp://" + get("BROKER_HOST") + ":" + get("BROKER_PORT");
    }

    /**
     * A client URL that follows the live broker of a pair (the same as {@link #brokerUrl} with a single broker):
     * both connectors, HA, reconnecting as often as the consumer does (BROKER_RECONNECT_ATTEMPTS: for ever, or for a
     * cluster of live nodes not at all).
     */
    public String brokerHaUrl() {
        return brokerHaUrl(brokerUrl(), backupUrl(), "");
    }

    /**
     * The same, tried in the order listed ({@link ListedOrder}), BROKER_BACKUP first when {@code backupFirst}: a client
     * starts on the broker named first while it answers, so producers can be spread over both nodes of a cluster.
     */
    public String brokerHaUrlListing(boolean backupFirst) {
        String policy = "&connectionLoadBalancingPolicyClassName=" + ListedOrder.class.getName();
        return backupFirst
                ? brokerHaUrl(backupUrl(), brokerUrl(), policy)
                : brokerHaUrl(brokerUrl(), backupUrl(), policy);
    }

    private String backupUrl() {
        return "tcp://" + get("BROKER_BACKUP_HOST") + ":" + get("BROKER_BACKUP_PORT");
    }

    private String brokerHaUrl(String first, String second, String extra) {
        // The consumer's reconnect attempts: a pair's client waits for the backup to take over however long it takes;
        // a cluster's gives up on a dead node at once (the caller's new connection lands on a live one): reconnecting
        // to it for ever, a producer's close blocked until the node came back, two minutes later.
        return "(" + first + "," + second + ")?ha=true&reconnectAttempts=" + get("BROKER_RECONNECT_ATTEMPTS") + extra
                + "&retryInterval=500"
                // A call made while the client fails over waits for it, 30 s by default: a commit sent in that
                // window held a producer half a minute after the backup was live.
                + "&callTimeout=5000&callFailoverTimeout=5000";
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

    /**
     * Every key's local default, a key that follows another given as the value it stands for, PAYMENTS_DEVELOPMENT as
     * the run command and the tests have it.
     */
    public static Map<String, String> defaults() {
        return new Settings(DEFAULTS).asEnvironment();
    }
}
