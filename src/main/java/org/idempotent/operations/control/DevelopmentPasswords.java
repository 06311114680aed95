package org.idempotent.operations.control;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.config.Config;

/**
 * The development passwords of server-config/post-boot-commands.asadmin, found in force outside development. A
 * post-boot file cannot stop a boot, so a Payara Micro started without its passwords would run on these defaults,
 * which anyone who read the repository knows: readiness stays DOWN and says which (ConsumerReadiness). Development
 * is what the run command and the tests declare (PAYMENTS_DEVELOPMENT=true).
 */
@ApplicationScoped
public class DevelopmentPasswords {

    public static final String DEVELOPMENT = "PAYMENTS_DEVELOPMENT";
    /** The post-boot file's defaults (DevelopmentPasswordsTest keeps them equal). */
    static final Map<String, String> DEFAULTS =
            Map.of("DB_PASSWORD", "payments_app", "DB_OWNER_PASSWORD", "postgres", "BROKER_PASSWORD", "payments");

    @Inject
    Config config;

    /** Each setting whose development default is in force, none in development. */
    public List<String> inForce() {
        if (config.getOptionalValue(DEVELOPMENT, Boolean.class).orElse(false)) {
            return List.of();
        }
        List<String> found = new ArrayList<>();
        DEFAULTS.forEach((key, development) -> {
            if (config.getOptionalValue(key, String.class)
                    .map(development::equals)
                    .orElse(true)) {
                found.add(key);
            }
        });
        found.sort(null);
        return found;
    }
}
