package org.idempotent.documents;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.idempotent.stack.Settings;

/**
 * The settings as server-config/configuration.properties writes them (read by {@link Settings}, as
 * ConfigurationDefaultsTest reads them), and the environment the scripts and the post-boot commands read.
 */
final class Configuration {

    /**
     * Environment names the product's files read or the documents name that are no setting of the product: each is
     * another program's, or says where a script finds what it works on, or holds a secret as a file.
     */
    static final Map<String, String> NOT_SETTINGS = Map.ofEntries(
            // Where the Artemis distribution is: create-instance.sh and operate.sh need it, the product does not.
            Map.entry("ARTEMIS_HOME", "the Artemis distribution a broker script runs"),
            // setup-payara-server.sh's inputs: the Payara Server installation and the files it deploys.
            Map.entry("ASADMIN", "setup-payara-server.sh: the asadmin of the installation"),
            Map.entry("ASADMIN_OPTIONS", "setup-payara-server.sh: passed to every asadmin call"),
            Map.entry("ADMIN_HOST", "setup-payara-server.sh: the DAS to configure"),
            Map.entry("ADMIN_PORT", "setup-payara-server.sh: the DAS to configure"),
            Map.entry("TARGET", "setup-payara-server.sh: the server or deployment group"),
            Map.entry("WAR", "setup-payara-server.sh: the WAR to deploy"),
            Map.entry("POSTGRESQL_JAR", "setup-payara-server.sh: the JDBC driver to add"),
            Map.entry("SLF4J_JARS", "setup-payara-server.sh: the resource adapter's logging jars"),
            // A file of a secret, read in place of the secret itself (Docker secrets).
            Map.entry("ADMIN_PASSWORD_ASADMIN_FILE", "the launcher's password file, made from ADMIN_PASSWORD"),
            Map.entry("DB_SUPERUSER_PASSWORD_FILE", "create-database.sh: a superuser's password file"),
            Map.entry("DB_REPLICATION_PASSWORD_FILE", "the HA compose file's PostgreSQL replication secret"),
            Map.entry("BROKER_OPERATOR_PASSWORD_FILE", "operate.sh: BROKER_OPERATOR_PASSWORD as a file"),
            Map.entry("BROKER_SUBSCRIBER_PASSWORD_FILE", "create-instance.sh: BROKER_SUBSCRIBER_PASSWORD as a file"),
            Map.entry("BROKER_PLUGINS", "create-instance.sh: the built plugins' directory"),
            // The Artemis start script's, the Payara Micro image's and the PostgreSQL image's own variables.
            Map.entry("JAVA_ARGS_APPEND", "Artemis's start script"),
            Map.entry("MEM_MAX_RAM_PERCENTAGE", "the Payara Micro image's"),
            Map.entry("MEM_XSS", "the Payara Micro image's"),
            Map.entry("JVM_ARGS", "the Payara Micro image's"),
            Map.entry("PGDATA", "the PostgreSQL image's"),
            Map.entry("PRIMARY_HOST", "the HA compose file's standby container"),
            Map.entry("STANDBY_NAME", "the HA compose file's standby container"),
            // OpenTelemetry's own variables, which the product passes through without a default of its own.
            Map.entry("OTEL_SDK_DISABLED", "OpenTelemetry's"),
            Map.entry("OTEL_TRACES_SAMPLER_ARG", "OpenTelemetry's"));

    static final Path POST_BOOT = Path.of("server-config", "post-boot-commands.asadmin");
    static final List<Path> SCRIPT_FOLDERS =
            List.of(Path.of("server-config"), Path.of("server-config", "artemis"), Path.of("docker"));

    private static final Pattern ASADMIN_READ = Pattern.compile("\\$\\{ENV=([A-Z][A-Z0-9_]*)");
    /** $NAME or ${NAME...} in a shell script; ${NAME=...} is asadmin's, $NAME{...} perl's. */
    private static final Pattern SHELL_READ =
            Pattern.compile("\\$\\{([A-Z][A-Z0-9_]*)(?=[:}?+-])|\\$([A-Z][A-Z0-9_]*)\\b(?!\\{)");

    private static final Pattern REFERENCE = Pattern.compile("\\$\\{([A-Z_]+)}");

    private Configuration() {}

    /** Every key with the default written for it, a ${NAME} resolved to NAME's. */
    static Map<String, String> defaults() {
        Map<String, String> written = Settings.configuration();
        return written.entrySet().stream()
                .collect(Collectors.toMap(Map.Entry::getKey, e -> resolve(written, e.getValue())));
    }

    /** The first words of the keys (DB, BROKER, RETENTION ...): what marks an upper-snake name as a setting's. */
    static Set<String> families() {
        return Settings.configuration().keySet().stream()
                .map(key -> key.substring(0, key.indexOf('_') < 0 ? key.length() : key.indexOf('_')))
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /** "file: NAME" for each environment name a script or the post-boot commands read, comments left out. */
    static List<String> readsByFile() {
        List<String> reads = new ArrayList<>();
        collect(POST_BOOT, ASADMIN_READ, reads);
        for (Path folder : SCRIPT_FOLDERS) {
            try (Stream<Path> scripts = Files.list(folder)) {
                for (Path script : scripts.filter(p -> p.toString().endsWith(".sh"))
                        .sorted()
                        .toList()) {
                    collect(script, SHELL_READ, reads);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return reads;
    }

    private static void collect(Path file, Pattern read, List<String> reads) {
        try {
            String code = Files.readAllLines(file).stream()
                    .filter(line -> !line.strip().startsWith("#"))
                    .collect(Collectors.joining("\n"));
            Matcher m = read.matcher(code);
            Set<String> names = new TreeSet<>();
            while (m.find()) {
                names.add(m.group(1) != null ? m.group(1) : m.group(2));
            }
            names.forEach(name -> reads.add(file.toString().replace('\\', '/') + ": " + name));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String resolve(Map<String, String> written, String value) {
        Matcher reference = REFERENCE.matcher(value);
        return reference.matches() ? resolve(written, written.getOrDefault(reference.group(1), "")) : value;
    }
}
