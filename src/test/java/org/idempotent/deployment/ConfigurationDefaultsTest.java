package org.idempotent.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.idempotent.stack.Settings;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * Every default is written once, in server-config/configuration.properties. The files that cannot read it (asadmin
 * commands, shell scripts, compose files) restate a default only where they must, and then the same one; the WAR
 * carries none of its own (the server's configuration gives every key, from the post-boot commands).
 */
class ConfigurationDefaultsTest {

    private static final Pattern ASADMIN_DEFAULT = Pattern.compile("\\$\\{ENV=([A-Z_]+):([^}]*)}");
    /** ${NAME:-default} in a shell script, the default possibly another ${OTHER:-default}. */
    private static final Pattern SHELL_DEFAULT = Pattern.compile("\\$\\{([A-Z_]+):-((?:[^${}]|\\$\\{[^}]*})*)}");

    private static final Path POST_BOOT = Path.of("server-config", "post-boot-commands.asadmin");
    private static final List<Path> SCRIPTS = List.of(
            Path.of("server-config", "setup-payara-server.sh"),
            Path.of("server-config", "create-database.sh"),
            Path.of("server-config", "artemis", "create-instance.sh"),
            Path.of("server-config", "artemis", "operate.sh"),
            Path.of("docker", "start.sh"),
            Path.of("docker", "broker-start.sh"));
    private static final List<Path> COMPOSE_FILES =
            List.of(Path.of("docker", "compose.yaml"), Path.of("docker", "compose-ha.yaml"));

    /** Every key with its default as the product sees it: a reference resolved, PAYMENTS_DEVELOPMENT false. */
    private static Map<String, String> defaults() {
        Map<String, String> defaults = new LinkedHashMap<>(Settings.defaults());
        defaults.put("PAYMENTS_DEVELOPMENT", Settings.configuration().get("PAYMENTS_DEVELOPMENT"));
        return defaults;
    }

    @Test
    void everyDefaultOfThePostBootCommandsIsTheOneOfTheConfiguration() throws IOException {
        String commands = Files.readAllLines(POST_BOOT).stream()
                .filter(line -> !line.startsWith("#"))
                .collect(Collectors.joining("\n"));
        Map<String, String> restated = new LinkedHashMap<>();
        Matcher m = ASADMIN_DEFAULT.matcher(commands);
        while (m.find()) {
            restated.put(m.group(1), m.group(2));
        }
        // A file the launcher writes from ADMIN_PASSWORD: a path, not a setting.
        restated.remove("ADMIN_PASSWORD_ASADMIN_FILE");

        assertThat(restated).containsKeys("DB_HOST", "CONSUMER_MAX_SESSIONS", "RETENTION_DAYS");
        assertThat(defaults()).containsAllEntriesOf(restated);
    }

    @Test
    void everyApplicationKeyIsADomainPropertyOfTheServer() throws IOException {
        List<String> keys = applicationKeys();

        assertThat(keys).contains("PAYMENTS_QUEUE", "CONSUMER_WINDOW_BYTES", "RETENTION_ROWS_PER_SECOND");
        assertThat(defaults()).containsKeys(keys.toArray(String[]::new));
        assertThat(Path.of("src", "main", "resources", "META-INF", "microprofile-config.properties"))
                .as("the WAR has no defaults of its own")
                .doesNotExist();
    }

    @Test
    void everyDefaultAShellScriptRestatesIsTheOneOfTheConfiguration() throws IOException {
        Map<String, String> defaults = defaults();
        List<String> differing = new ArrayList<>();
        int restated = 0;
        for (Path script : SCRIPTS) {
            Matcher m = SHELL_DEFAULT.matcher(Files.readString(script));
            while (m.find()) {
                if (!defaults.containsKey(m.group(1))) {
                    continue; // a parameter of the script itself (ASADMIN, TARGET, ...), not a setting
                }
                restated++;
                String value = innermost(m.group(2));
                if (!value.equals(defaults.get(m.group(1)))) {
                    differing.add(script + ": " + m.group() + " (configuration: " + defaults.get(m.group(1)) + ")");
                }
            }
        }

        assertThat(restated).isGreaterThan(20);
        assertThat(differing).isEmpty();
    }

    @Test
    @SuppressWarnings("unchecked")
    void composeSetsOnlyWhatDiffersFromADefaultAndPassesTheRestThrough() throws IOException {
        Map<String, String> defaults = defaults();
        List<String> restated = new ArrayList<>();
        for (Path file : COMPOSE_FILES) {
            Map<String, Object> compose;
            try (Reader reader = Files.newBufferedReader(file)) {
                compose = new Yaml().load(reader);
            }
            for (Map.Entry<String, Map<String, Object>> service :
                    ((Map<String, Map<String, Object>>) compose.get("services")).entrySet()) {
                Object environment = service.getValue().get("environment");
                if (!(environment instanceof Map<?, ?> variables)) {
                    continue;
                }
                variables.forEach((key, value) -> {
                    // A value, or compose's own ${KEY:-default}: either restates the default when equal to it.
                    Matcher interpolated = SHELL_DEFAULT.matcher(String.valueOf(value));
                    String given = interpolated.matches() ? innermost(interpolated.group(2)) : String.valueOf(value);
                    if (value != null && given.equals(defaults.get(String.valueOf(key)))) {
                        restated.add(file + ", " + service.getKey() + ": " + key + "=" + value);
                    }
                });
            }
        }

        assertThat(restated).isEmpty();
    }

    @Test
    void theBrokersRedeliveryLimitsAreTheOnesTheRetentionCheckAssumes() throws IOException {
        String broker = Files.readString(Path.of("server-config", "artemis", "broker.xml"));
        // A value may be a system property with its default: ${name:default}.
        Matcher attempts = Pattern.compile("<max-delivery-attempts>(?:\\$\\{[\\w.]+:)?(\\d+)}?</max-delivery-attempts>")
                .matcher(broker);
        Matcher delay = Pattern.compile("<max-redelivery-delay>(?:\\$\\{[\\w.]+:)?(\\d+)}?</max-redelivery-delay>")
                .matcher(broker);

        assertThat(attempts.find()).isTrue();
        assertThat(delay.find()).isTrue();
        assertThat(defaults()).containsEntry("BROKER_MAX_DELIVERY_ATTEMPTS", attempts.group(1));
        assertThat(Long.parseLong(defaults().get("BROKER_MAX_REDELIVERY_DELAY_SECONDS")) * 1000)
                .isEqualTo(Long.parseLong(delay.group(1)));
    }

    /** The keys the post-boot commands make domain properties: what the application reads. */
    static List<String> applicationKeys() throws IOException {
        Matcher m = Pattern.compile("(?m)^set-config-property --propertyName=([A-Z_]+) ")
                .matcher(Files.readString(POST_BOOT));
        List<String> keys = new ArrayList<>();
        while (m.find()) {
            keys.add(m.group(1));
        }
        return keys;
    }

    /** The value a nested default comes to when none of its variables is set: ${A:-${B:-x}} is x. */
    private static String innermost(String value) {
        Matcher nested = SHELL_DEFAULT.matcher(value);
        return nested.matches() ? innermost(nested.group(2)) : value;
    }
}
