package org.idempotent.stack;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The local defaults are written in three places that must agree: the launcher, the post-boot file, the WAR. */
class SettingsTest {

    private static final Pattern ENV_DEFAULT = Pattern.compile("\\$\\{ENV=([A-Z_]+):([^}]*)}");

    @Test
    void postBootDefaultsAgreeWithTheLauncherDefaults() throws IOException {
        Map<String, String> postBoot = new HashMap<>();
        String commands = Files.readAllLines(Path.of("server-config", "post-boot-commands.asadmin")).stream()
                .filter(line -> !line.startsWith("#"))
                .collect(Collectors.joining("\n"));
        Matcher m = ENV_DEFAULT.matcher(commands);
        while (m.find()) {
            String previous = postBoot.put(m.group(1), m.group(2));
            assertThat(previous)
                    .as("one default per key in post-boot: %s", m.group(1))
                    .isIn(null, m.group(2));
        }

        assertThat(postBoot)
                .containsKeys(
                        "DB_HOST",
                        "DB_PORT",
                        "DB_NAME",
                        "DB_USER",
                        "DB_PASSWORD",
                        "DB_POOL_MAX",
                        "BROKER_HOST",
                        "BROKER_PORT",
                        "BROKER_USER",
                        "BROKER_PASSWORD");
        // Paths the launcher derives from the build and the stack directory.
        postBoot.remove("ARTEMIS_RAR");
        postBoot.remove("ADMIN_PASSWORD_ASADMIN_FILE");
        // false on a server, declared true by the launcher and the tests.
        assertThat(postBoot.remove("PAYMENTS_DEVELOPMENT")).isEqualTo("false");
        assertThat(Settings.defaults()).containsAllEntriesOf(postBoot);
    }

    @Test
    void applicationDefaultsAgreeWithTheLauncherDefaults() throws IOException {
        Properties application = new Properties();
        try (Reader reader =
                Files.newBufferedReader(Path.of("src/main/resources/META-INF/microprofile-config.properties"))) {
            application.load(reader);
        }

        assertThat(application).isNotEmpty();
        application.forEach(
                (key, value) -> assertThat(Settings.defaults()).containsEntry((String) key, (String) value));
    }

    @Test
    void redeliveryLimitsOfTheRetentionCheckAgreeWithTheBrokerConfiguration() throws IOException {
        String broker = Files.readString(Path.of("server-config", "artemis", "broker.xml"));
        // A value may be a system property with its default: ${name:default}.
        Matcher attempts = Pattern.compile("<max-delivery-attempts>(?:\\$\\{[\\w.]+:)?(\\d+)}?</max-delivery-attempts>")
                .matcher(broker);
        Matcher delay = Pattern.compile("<max-redelivery-delay>(?:\\$\\{[\\w.]+:)?(\\d+)}?</max-redelivery-delay>")
                .matcher(broker);

        assertThat(attempts.find()).isTrue();
        assertThat(delay.find()).isTrue();
        assertThat(Settings.defaults()).containsEntry("BROKER_MAX_DELIVERY_ATTEMPTS", attempts.group(1));
        assertThat(Long.parseLong(Settings.defaults().get("BROKER_MAX_REDELIVERY_DELAY_SECONDS")) * 1000)
                .isEqualTo(Long.parseLong(delay.group(1)));
    }
}
