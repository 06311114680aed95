package org.idempotent.operations.control;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.microprofile.config.Config;
import org.junit.jupiter.api.Test;

class DevelopmentPasswordsTest {

    @Test
    void outsideDevelopmentAMissingOrDefaultPasswordIsNamed() {
        assertThat(passwords(Map.of()).inForce())
                .containsExactly("BROKER_PASSWORD", "DB_OWNER_PASSWORD", "DB_PASSWORD");
        assertThat(passwords(Map.of(
                                "DB_PASSWORD",
                                "s3cret-app",
                                "DB_OWNER_PASSWORD",
                                "s3cret-owner",
                                "BROKER_PASSWORD",
                                "payments"))
                        .inForce())
                .containsExactly("BROKER_PASSWORD");
    }

    @Test
    void passwordsOfTheirOwnOrDevelopmentDeclaredPass() {
        assertThat(passwords(Map.of("DB_PASSWORD", "a", "DB_OWNER_PASSWORD", "b", "BROKER_PASSWORD", "c"))
                        .inForce())
                .isEmpty();
        assertThat(passwords(Map.of(DevelopmentPasswords.DEVELOPMENT, "true")).inForce())
                .isEmpty();
        assertThat(passwords(Map.of(DevelopmentPasswords.DEVELOPMENT, "false")).inForce())
                .hasSize(3);
    }

    @Test
    void theDefaultsCheckedAreThePostBootFilesDefaults() throws IOException {
        String postBoot = Files.readString(Path.of("server-config", "post-boot-commands.asadmin"));
        Map<String, String> found = new HashMap<>();
        Matcher m = Pattern.compile("\\$\\{ENV=(DB_PASSWORD|DB_OWNER_PASSWORD|BROKER_PASSWORD):([^}]*)}")
                .matcher(postBoot);
        while (m.find()) {
            found.put(m.group(1), m.group(2));
        }

        assertThat(found).isEqualTo(DevelopmentPasswords.DEFAULTS);
    }

    private static DevelopmentPasswords passwords(Map<String, String> values) {
        DevelopmentPasswords passwords = new DevelopmentPasswords();
        passwords.config = (Config) Proxy.newProxyInstance(
                Config.class.getClassLoader(), new Class<?>[] {Config.class}, (self, method, args) -> {
                    if (!method.getName().equals("getOptionalValue")) {
                        throw new UnsupportedOperationException(method.getName());
                    }
                    Optional<String> value = Optional.ofNullable(values.get((String) args[0]));
                    return args[1] == Boolean.class ? value.map(Boolean::valueOf) : value;
                });
        return passwords;
    }
}
