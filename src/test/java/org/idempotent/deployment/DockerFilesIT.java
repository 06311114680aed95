package org.idempotent.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * The Docker files, checked without a Docker engine, after mvn package: everything they reference exists, the compose
 * file is valid YAML with the services, ports, health checks and volumes the README documents, every setting of the
 * README's configuration table is passed to the application, and every image tag is pinned.
 */
class DockerFilesIT {

    private static final Path DOCKERFILE = Path.of("docker", "Dockerfile");
    private static final Path COMPOSE = Path.of("docker", "compose.yaml");
    private static final Pattern PINNED = Pattern.compile("[a-z0-9./-]+:[0-9][A-Za-z0-9._-]*");
    /** Settings of the README table that only the launcher or the build uses; the image sets its own paths. */
    private static final Set<String> NOT_FOR_THE_CONTAINER = Set.of("HTTP_PORT", "STACK_DIR", "ARTEMIS_RAR");

    @Test
    void everyFileTheDockerfileCopiesExistsAfterPackageAndItsBaseImageIsPinned() throws IOException {
        List<String> lines = Files.readAllLines(DOCKERFILE);
        List<String> copied = new ArrayList<>();
        String from = null;
        for (String line : lines) {
            String[] words = line.trim().split("\\s+");
            if (words[0].equals("FROM")) {
                from = words[1];
            } else if (words[0].equals("COPY")) {
                for (int i = 1; i < words.length - 1; i++) {
                    if (!words[i].startsWith("--")) {
                        copied.add(words[i]);
                    }
                }
            }
        }

        assertThat(lines.get(0)).as("a first comment says how to run it").startsWith("#");
        assertThat(from).matches(PINNED);
        assertThat(copied).contains("target/payment-consumer.war", "target/runtime/artemis-ra.rar",
                "target/runtime/postgresql.jar", "server-config/post-boot-commands.asadmin");
        assertThat(copied).allSatisfy(file -> assertThat(Path.of(file)).as(file).isRegularFile());
    }

    @Test
    @SuppressWarnings("unchecked")
    void composeFileHasTheServicesPortsHealthChecksVolumesAndEverySetting() throws IOException {
        Map<String, Object> compose;
        try (Reader reader = Files.newBufferedReader(COMPOSE)) {
            compose = new Yaml().load(reader);
        }
        Map<String, Map<String, Object>> services = (Map<String, Map<String, Object>>) compose.get("services");

        assertThat(Files.readAllLines(COMPOSE).get(0)).as("a first comment says how to run it").startsWith("#");
        assertThat(services).containsOnlyKeys("postgres", "broker", "payment-consumer");
        for (Map.Entry<String, Map<String, Object>> service : services.entrySet()) {
            assertThat(service.getValue()).as(service.getKey()).containsKeys("image", "healthcheck");
            assertThat((String) service.getValue().get("image")).as(service.getKey()).matches(PINNED);
        }
        assertThat((List<String>) services.get("payment-consumer").get("ports")).containsExactly("8080:8080");
        assertThat((List<String>) services.get("broker").get("ports")).containsExactly("61616:61616");
        assertThat((Map<String, Object>) compose.get("volumes")).containsKeys("postgres-data", "broker-data");
        assertThat(volumes(services.get("postgres"))).contains("postgres-data:/var/lib/postgresql/data");
        assertThat(volumes(services.get("broker"))).contains("broker-data:/var/lib/artemis-instance/data",
                "../server-config/artemis/broker.xml:/var/lib/artemis-instance/etc-override/broker.xml:ro");
        for (String volume : volumes(services.get("broker"))) {
            if (volume.startsWith("../")) {
                assertThat(Path.of("docker").resolve(volume.split(":")[0])).as(volume).isRegularFile();
            }
        }
        Map<String, Object> build = (Map<String, Object>) services.get("payment-consumer").get("build");
        assertThat(Path.of("docker").resolve((String) build.get("context")).resolve((String) build.get("dockerfile")))
                .isRegularFile();

        Map<String, Object> environment = (Map<String, Object>) services.get("payment-consumer").get("environment");
        Set<String> documented = documentedSettings();
        documented.removeAll(NOT_FOR_THE_CONTAINER);
        assertThat(environment.keySet()).as("every documented setting is passed").containsAll(documented);
        assertThat(documented).as("and nothing undocumented").containsAll(environment.keySet());
    }

    @SuppressWarnings("unchecked")
    private static List<String> volumes(Map<String, Object> service) {
        return (List<String>) service.get("volumes");
    }

    /** The keys of the README's configuration table. */
    private static Set<String> documentedSettings() throws IOException {
        String readme = Files.readString(Path.of("README.md"));
        String table = readme.substring(readme.indexOf("## Configuration"));
        table = table.substring(0, table.indexOf("\n## ", 5));
        Set<String> keys = new LinkedHashSet<>();
        Matcher m = Pattern.compile("(?m)^\\| `([A-Z_]+)` \\|").matcher(table);
        while (m.find()) {
            keys.add(m.group(1));
        }
        assertThat(keys).as("the README's configuration table").contains("DB_HOST", "RETENTION_DAYS");
        return keys;
    }
}
