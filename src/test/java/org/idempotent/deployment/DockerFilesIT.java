package org.idempotent.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.idempotent.fixtures.PrometheusServer;
import org.idempotent.stack.Build;
import org.idempotent.stack.PayaraMicroProcess;
import org.idempotent.stack.Settings;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * The Docker files, checked without a Docker engine (none runs here), after mvn package, against the facts of the
 * images they build on (read from the upstream sources, cited in the Dockerfile): every stage pinned, the broker the
 * same version as the distribution the tests run, every file copied exists and passes the ignore file, the scripts
 * use only what their image has, no password has a default and none travels in an environment variable, ports on
 * loopback, restart policies, memory limits, roles that are not the superuser, every documented setting passed.
 */
class DockerFilesIT {

    private static final Path DOCKERFILE = Path.of("docker", "Dockerfile");
    private static final Path IGNORE = Path.of("docker", "Dockerfile.dockerignore");
    private static final Path COMPOSE = Path.of("docker", "compose.yaml");
    private static final Path COMPOSE_HA = Path.of("docker", "compose-ha.yaml");
    private static final Pattern PINNED = Pattern.compile("[a-z0-9./-]+:[0-9][A-Za-z0-9._-]*");
    /** Settings that only the launcher, the build or the broker instance uses; the image sets its own paths. */
    private static final Set<String> NOT_FOR_THE_CONTAINER = Set.of(
            "HTTP_PORT",
            "STACK_DIR",
            "ARTEMIS_RAR",
            "BROKER_PRODUCER_USER",
            "BROKER_PRODUCER_PASSWORD",
            "BROKER_OPERATOR_USER",
            "BROKER_OPERATOR_PASSWORD",
            "BROKER_CONSOLE_PORT",
            "BROKER_METRICS_PORT",
            "BROKER_TLS_PORT",
            "BROKER_TLS_KEYSTORE",
            "BROKER_TLS_KEYSTORE_PASSWORD",
            "BROKER_HA_ROLE",
            "BROKER_STORE",
            "BROKER_ANNOUNCE_HOST",
            "BROKER_PEER_HOST",
            "BROKER_PEER_PORT",
            "BROKER_CLUSTER_PASSWORD",
            "BROKER_CLUSTER_PEERS",
            "BROKER_REDISTRIBUTION_DELAY_MS",
            "BROKER_PLUGINS",
            "BROKER_ANNOUNCEMENT_QUEUES",
            "BROKER_SUBSCRIBER_USER",
            "BROKER_SUBSCRIBER_PASSWORD",
            "BROKER_BIND",
            "BROKER_CONSOLE_HOST",
            "BROKER_METRICS_HOST");

    private static final String LOOPBACK_UNLESS_CONFIGURED = "${PUBLISH_ADDRESS:-127.0.0.1}:";

    /** FROM image AS name, the instructions after it. */
    private record Stage(String image, String name, List<String> instructions) {}

    @Test
    void everyStageIsPinnedAndTheBrokerIsTheVersionTheTestsRun() throws IOException {
        Map<String, Stage> stages = stages();

        assertThat(Files.readAllLines(DOCKERFILE).get(0)).isEqualTo("# syntax=docker/dockerfile:1");
        assertThat(stages.keySet()).containsExactly("build", "broker", "database-setup", "");
        stages.values()
                .forEach(stage -> assertThat(stage.image()).as(stage.name()).matches(PINNED));
        assertThat(stages.get("broker").image()).isEqualTo("apache/activemq-artemis:" + brokerVersion());
        // The consumer runs the Payara Micro the build tests, on a JDK of the 7 line's floor or newer; so does the
        // build.
        assertThat(stages.get("").image())
                .matches("payara/micro:" + Pattern.quote(pomProperty("payara.version")) + "-jdk(2[1-9]|[3-9]\\d)");
        assertThat(stages.get("build").image()).matches("maven:[\\d.]+-eclipse-temurin-(2[1-9]|[3-9]\\d)");
        assertThat(stages.get("database-setup").image())
                .isEqualTo(service("postgres").get("image"));
        assertThat(String.join("\n", stages.get("build").instructions())).contains("mvn", "package");
    }

    @Test
    void everyFileCopiedExistsAndIsInTheBuildContext() throws IOException {
        List<String> ignore = Files.readAllLines(IGNORE).stream()
                .filter(line -> !line.isBlank() && !line.startsWith("#"))
                .toList();
        assertThat(ignore.get(0)).as("everything is left out but what is named").isEqualTo("*");
        Set<String> admitted = new LinkedHashSet<>();
        ignore.stream().skip(1).forEach(line -> admitted.add(line.substring(1)));

        for (Stage stage : stages().values()) {
            for (String instruction : stage.instructions()) {
                List<String> words = List.of(instruction.trim().split("\\s+"));
                if (!words.get(0).equals("COPY")) {
                    continue;
                }
                boolean fromBuild = words.contains("--from=build");
                for (String source : words.subList(1, words.size() - 1)) {
                    if (source.startsWith("--")) {
                        continue;
                    }
                    if (fromBuild) {
                        assertThat(source).startsWith("/build/target/");
                        assertThat(Path.of(source.substring("/build/".length())))
                                .as(source)
                                .exists();
                    } else {
                        assertThat(Path.of(source)).as(source).exists();
                        assertThat(admitted)
                                .as("the ignore file admits %s", source)
                                .anyMatch(entry -> source.equals(entry) || source.startsWith(entry + "/"));
                    }
                }
            }
        }
    }

    @Test
    void theConsumerImageUsesOnlyWhatPayaraMicrosImageHasAndKeepsItsMemorySettings() throws IOException {
        Stage consumer = stages().get("");
        String instructions = String.join("\n", consumer.instructions());
        String start = Files.readString(Path.of("docker", "start.sh"));

        // Alpine with BusyBox: sh and wget, tini on the PATH; no bash, no curl.
        assertThat(instructions)
                .contains("ENTRYPOINT [\"tini\", \"--\", \"/bin/sh\", \"/opt/payara/start.sh\"]")
                .contains("CMD wget -qO- http://127.0.0.1:8080/health/ready")
                .doesNotContain("curl", "bash");
        assertThat(start).startsWith("#!/bin/sh\n").doesNotContain("[[", "${!", "local ", "bash");
        assertThat(start)
                .contains("-XX:MaxRAMPercentage=\"${MEM_MAX_RAM_PERCENTAGE", "-Xss\"${MEM_XSS")
                .contains("exec java")
                .contains(PayaraMicroProcess.SERIAL_STARTUP);
        assertThat(instructions).contains("-XX:+ExitOnOutOfMemoryError");
        assertThat(Files.readString(Path.of("server-config", "artemis", "create-instance.sh")))
                .contains("-XX:+ExitOnOutOfMemoryError");
    }

    @Test
    void withoutItsPasswordsNeitherTheConsumerNorTheBrokerStarts() throws Exception {
        ProcessBuilder consumerBuilder = new ProcessBuilder("sh", "docker/start.sh").redirectErrorStream(true);
        consumerBuilder.environment().keySet().removeIf(key -> key.contains("PASSWORD"));
        Process consumer = consumerBuilder.start();
        ProcessBuilder brokerBuilder = new ProcessBuilder(
                        "bash", "server-config/artemis/create-instance.sh", "target/no-such-instance")
                .redirectErrorStream(true);
        brokerBuilder.environment().keySet().removeIf(key -> key.contains("PASSWORD"));
        brokerBuilder.environment().put("ARTEMIS_HOME", Build.artemisHome().toString());
        Process broker = brokerBuilder.start();

        assertThat(consumer.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(consumer.exitValue()).isNotZero();
        assertThat(new String(consumer.getInputStream().readAllBytes()))
                .contains("set DB_PASSWORD (or DB_PASSWORD_FILE)");
        assertThat(broker.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(broker.exitValue()).isNotZero();
        assertThat(new String(broker.getInputStream().readAllBytes())).contains("set BROKER_PASSWORD");
        assertThat(Path.of("target", "no-such-instance")).doesNotExist();
    }

    @Test
    @SuppressWarnings("unchecked")
    void composeRunsEveryServiceRestartedLimitedOnLoopbackWithSecretsAsFiles() throws IOException {
        Map<String, Object> compose = compose();
        Map<String, Map<String, Object>> services = (Map<String, Map<String, Object>>) compose.get("services");
        Map<String, Object> secrets = (Map<String, Object>) compose.get("secrets");

        assertThat(Files.readAllLines(COMPOSE).get(0))
                .as("a first comment says how to run it")
                .startsWith("#");
        assertThat(services).containsOnlyKeys("postgres", "database-setup", "broker", "payment-consumer");
        for (Map.Entry<String, Map<String, Object>> entry : services.entrySet()) {
            String name = entry.getKey();
            Map<String, Object> service = entry.getValue();
            assertThat((String) service.get("image")).as(name).matches(PINNED);
            boolean oneShot = name.equals("database-setup");
            assertThat(service.get("restart")).as(name).isEqualTo(oneShot ? "no" : "unless-stopped");
            if (!oneShot) {
                assertThat(service).as(name).containsKeys("healthcheck", "mem_limit");
            }
            for (String port : (List<String>) service.getOrDefault("ports", List.of())) {
                assertThat(port).as(name).startsWith(LOOPBACK_UNLESS_CONFIGURED);
            }
            Map<String, Object> environment = (Map<String, Object>) service.getOrDefault("environment", Map.of());
            for (Map.Entry<String, Object> variable : environment.entrySet()) {
                assertThat(variable.getKey())
                        .as("%s: passwords only as files", name)
                        .doesNotEndWith("PASSWORD");
                if (variable.getKey().endsWith("PASSWORD_FILE")) {
                    String file = String.valueOf(variable.getValue());
                    assertThat(file).as(name).startsWith("/run/secrets/");
                    String secret = file.substring("/run/secrets/".length());
                    assertThat(secrets).as(name).containsKey(secret);
                    assertThat((List<String>) service.get("secrets")).as(name).contains(secret);
                }
            }
        }
        // Passwords from the environment; only the key stores are files (of the host), required, not defaulted.
        secrets.forEach((name, definition) -> {
            Map<String, Object> source = (Map<String, Object>) definition;
            if (name.endsWith("store")) {
                assertThat(source).as(name).containsOnlyKeys("file");
                assertThat((String) source.get("file")).as(name).matches("\\$\\{[A-Z_]+:\\?[^}]+}");
            } else {
                assertThat(source).as(name).containsOnlyKeys("environment");
            }
        });
        Map<String, Object> consumerEnvironment =
                (Map<String, Object>) service("payment-consumer").get("environment");
        assertThat(consumerEnvironment)
                .as("the consumer reaches the broker over TLS")
                .containsEntry("BROKER_SSL_ENABLED", "true")
                .containsEntry("BROKER_PORT", "61617");
        assertThat(consumerEnvironment).as("the admin API over HTTPS").containsKey("ADMIN_TLS_KEYSTORE");
        assertThat((List<String>) service("payment-consumer").get("ports"))
                .contains(LOOPBACK_UNLESS_CONFIGURED + "8181:8181");
        // Payara Micro serves the key store's payments-admin key on its HTTPS port (checked by hand: 6.2025.10 with
        // --sslport, --sslcert and javax.net.ssl.keyStore served that certificate, not its own).
        assertThat(Files.readString(Path.of("docker", "start.sh")))
                .contains(
                        "--sslport 8181 --sslcert payments-admin",
                        "javax.net.ssl.keyStore=",
                        "--systemproperties /tmp/tls.properties");

        // pg_isready over TCP: the image's first-init server listens on its socket only.
        assertThat((List<String>) ((Map<String, Object>) service("postgres").get("healthcheck")).get("test"))
                .containsSubsequence("pg_isready", "-h", "127.0.0.1");
        Map<String, Object> dependsOn =
                (Map<String, Object>) service("payment-consumer").get("depends_on");
        assertThat(dependsOn)
                .containsEntry("database-setup", Map.of("condition", "service_completed_successfully"))
                .containsEntry("broker", Map.of("condition", "service_healthy"));
        assertThat((List<String>) service("broker").get("volumes"))
                .containsExactly("broker-data:/var/lib/artemis-instance");
        assertThat((List<String>) service("postgres").get("volumes"))
                .containsExactly("postgres-data:/var/lib/postgresql/data");
        for (String built : List.of("database-setup", "broker", "payment-consumer")) {
            Map<String, Object> build = (Map<String, Object>) service(built).get("build");
            assertThat(Path.of("docker").resolve((String) build.get("context")).resolve((String)
                            build.get("dockerfile")))
                    .as(built)
                    .isEqualTo(Path.of("docker", "..", "docker", "Dockerfile"));
        }
        assertThat(((Map<String, Object>) service("broker").get("build")).get("target"))
                .isEqualTo("broker");
    }

    /**
     * The production topology's compose file: the broker pair on one shared store with roles and peers crossed, a
     * PostgreSQL primary whose synchronous replication the standby inherits from its base backup, two consumers that
     * list both brokers and both database servers; the same images and rules as compose.yaml.
     */
    @Test
    @SuppressWarnings("unchecked")
    void theProductionTopologyComposeFileRunsBothPairsAndTwoConsumers() throws IOException {
        Map<String, Object> compose;
        try (Reader reader = Files.newBufferedReader(COMPOSE_HA)) {
            compose = new Yaml().load(reader);
        }
        Map<String, Map<String, Object>> services = (Map<String, Map<String, Object>>) compose.get("services");
        Map<String, Object> secrets = (Map<String, Object>) compose.get("secrets");

        assertThat(Files.readAllLines(COMPOSE_HA).get(0)).startsWith("#");
        assertThat(services)
                .containsOnlyKeys(
                        "postgres-primary",
                        "postgres-standby",
                        "database-setup",
                        "broker-primary",
                        "broker-backup",
                        "payment-consumer-a",
                        "payment-consumer-b");
        for (Map.Entry<String, Map<String, Object>> entry : services.entrySet()) {
            String name = entry.getKey();
            Map<String, Object> service = entry.getValue();
            String single = name.startsWith("postgres")
                    ? "postgres"
                    : name.startsWith("broker")
                            ? "broker"
                            : name.startsWith("payment-consumer") ? "payment-consumer" : name;
            assertThat(service.get("image"))
                    .as("%s: the image of compose.yaml", name)
                    .isEqualTo(service(single).get("image"));
            assertThat(service.get("restart"))
                    .as(name)
                    .isEqualTo(single.equals("database-setup") ? "no" : "unless-stopped");
            for (String port : (List<String>) service.getOrDefault("ports", List.of())) {
                assertThat(port).as(name).startsWith(LOOPBACK_UNLESS_CONFIGURED);
            }
            Map<String, Object> environment = (Map<String, Object>) service.getOrDefault("environment", Map.of());
            environment.forEach((key, value) -> {
                assertThat(key).as("%s: passwords only as files", name).doesNotEndWith("PASSWORD");
                if (key.endsWith("PASSWORD_FILE")) {
                    String secret = String.valueOf(value).substring("/run/secrets/".length());
                    assertThat(secrets).as(name).containsKey(secret);
                    assertThat((List<String>) service.get("secrets")).as(name).contains(secret);
                }
            });
            for (String volume : (List<String>) service.getOrDefault("volumes", List.of())) {
                if (volume.startsWith("./")) {
                    assertThat(Path.of("docker").resolve(volume.substring(2, volume.indexOf(':'))))
                            .as(name)
                            .exists();
                }
            }
        }

        Map<String, Object> primary =
                (Map<String, Object>) services.get("broker-primary").get("environment");
        Map<String, Object> backup =
                (Map<String, Object>) services.get("broker-backup").get("environment");
        assertThat(primary)
                .containsEntry("BROKER_HA_ROLE", "primary")
                .containsEntry("BROKER_PEER_HOST", "broker-backup")
                .containsEntry("BROKER_ANNOUNCE_HOST", "broker-primary");
        assertThat(backup)
                .containsEntry("BROKER_HA_ROLE", "backup")
                .containsEntry("BROKER_PEER_HOST", "broker-primary")
                .containsEntry("BROKER_ANNOUNCE_HOST", "broker-backup");
        assertThat(primary.get("BROKER_STORE")).isEqualTo(backup.get("BROKER_STORE"));
        String store = "broker-store:" + primary.get("BROKER_STORE");
        assertThat((List<String>) services.get("broker-primary").get("volumes")).contains(store);
        assertThat((List<String>) services.get("broker-backup").get("volumes")).contains(store);
        assertThat(Files.readString(DOCKERFILE)).contains("chown artemis:artemis " + primary.get("BROKER_STORE"));

        String init = Files.readString(Path.of("docker", "postgres-primary-init.sh"));
        assertThat(init)
                .contains(
                        "ALTER SYSTEM SET synchronous_commit = 'on'",
                        "ALTER SYSTEM SET synchronous_standby_names = '*'",
                        "host replication replicator");
        assertThat(String.valueOf(services.get("postgres-primary").get("command")))
                .as("set where ALTER SYSTEM can clear it after a promotion")
                .doesNotContain("synchronous");
        assertThat(Files.readString(Path.of("docker", "postgres-standby-start.sh")))
                .contains("pg_basebackup", " -R", "application_name=", "exec docker-entrypoint.sh");

        for (String consumer : List.of("payment-consumer-a", "payment-consumer-b")) {
            Map<String, Object> environment =
                    (Map<String, Object>) services.get(consumer).get("environment");
            assertThat(environment)
                    .as(consumer)
                    .containsEntry("BROKER_HOST", "broker-primary")
                    .containsEntry("BROKER_BACKUP_HOST", "broker-backup")
                    .containsEntry("DB_HOST", "postgres-primary")
                    .containsEntry("DB_STANDBY_HOST", "postgres-standby");
        }
        assertThat(Files.readString(Path.of("docker", "start.sh"))).contains("BROKER_BACKUP_HOST=", "DB_STANDBY_HOST=");
    }

    @Test
    @SuppressWarnings("unchecked")
    void theApplicationConnectsAsItsOwnRolesAndGetsEveryDocumentedSetting() throws IOException {
        Map<String, Object> environment =
                (Map<String, Object>) service("payment-consumer").get("environment");
        Map<String, Object> setup =
                (Map<String, Object>) service("database-setup").get("environment");

        // Both pass DB_USER through (no value in compose): the same, the configuration's default when unset.
        assertThat(environment).containsKey("DB_USER");
        assertThat(environment.get("DB_USER")).isEqualTo(setup.get("DB_USER"));
        String user = environment.get("DB_USER") == null
                ? Settings.configuration().get("DB_USER")
                : String.valueOf(environment.get("DB_USER"));
        assertThat(user).isNotIn("postgres", environment.get("DB_OWNER_USER"));
        assertThat(environment.get("DB_OWNER_USER")).isNotEqualTo("postgres").isEqualTo(setup.get("DB_OWNER_USER"));

        Set<String> passed = new LinkedHashSet<>();
        environment.keySet().forEach(key -> passed.add(key.replaceFirst("_FILE$", "")));
        Set<String> documented = documentedSettings();
        documented.removeAll(NOT_FOR_THE_CONTAINER);
        assertThat(passed).as("every documented setting is passed").containsAll(documented);
        assertThat(documented).as("and nothing undocumented").containsAll(passed);
    }

    @Test
    @SuppressWarnings("unchecked")
    void prometheusScrapesTheConsumerAndTheBrokerWhereComposeRunsThem() throws IOException {
        Map<String, Object> prometheus = yaml(Path.of("docker", "prometheus.yml"));
        List<String> targets =
                targetsByJob(prometheus).values().stream().flatMap(List::stream).toList();

        assertThat(targets).containsExactly("payment-consumer:8080", "broker:9404");
        // Mounted beside the configuration: the shipped rules, under their own name.
        assertThat((List<String>) prometheus.get("rule_files"))
                .containsExactly(PrometheusServer.RULES.getFileName().toString());
        assertThat(PrometheusServer.RULES).exists();
        for (String target : targets) {
            String[] hostPort = target.split(":");
            assertThat((List<String>) service(hostPort[0]).get("ports"))
                    .as(target)
                    .anyMatch(port -> port.endsWith(":" + hostPort[1]));
        }
        assertThat(Files.readString(Path.of("docker", "Dockerfile"))).contains("BROKER_METRICS_HOST=0.0.0.0");
    }

    /** prometheus-ha.yml: every consumer and both brokers of compose-ha.yaml, the same jobs and rules. */
    @Test
    @SuppressWarnings("unchecked")
    void prometheusForThePairScrapesBothConsumersAndBothBrokers() throws IOException {
        Map<String, Object> prometheus = yaml(Path.of("docker", "prometheus-ha.yml"));
        Map<String, Object> services = (Map<String, Object>) yaml(COMPOSE_HA).get("services");
        Map<String, List<String>> targets = targetsByJob(prometheus);

        assertThat(targets.get("payment-consumer"))
                .containsExactlyInAnyOrderElementsOf(services.keySet().stream()
                        .filter(name -> name.startsWith("payment-consumer"))
                        .map(name -> name + ":8080")
                        .toList());
        assertThat(targets.get("payments-broker")).containsExactly("broker-primary:9404", "broker-backup:9404");
        assertThat(services).containsKeys("broker-primary", "broker-backup");
        assertThat((List<String>) prometheus.get("rule_files"))
                .containsExactly(PrometheusServer.RULES.getFileName().toString());
    }

    @Test
    void shellScriptsKeepLineFeedsOnEveryCheckout() throws IOException {
        assertThat(Files.readAllLines(Path.of(".gitattributes"))).contains("*.sh text eol=lf");
    }

    private static Map<String, Stage> stages() throws IOException {
        Map<String, Stage> stages = new LinkedHashMap<>();
        Stage current = null;
        StringBuilder continued = new StringBuilder();
        for (String line : Files.readAllLines(DOCKERFILE)) {
            if (line.startsWith("#") || line.isBlank()) {
                continue;
            }
            continued.append(line.endsWith("\\") ? line.substring(0, line.length() - 1) : line);
            if (line.endsWith("\\")) {
                continue;
            }
            String instruction = continued.toString().trim();
            continued.setLength(0);
            String[] words = instruction.split("\\s+");
            if (words[0].equals("FROM")) {
                String name = words.length > 3 && words[2].equalsIgnoreCase("AS") ? words[3] : "";
                current = new Stage(words[1], name, new ArrayList<>());
                stages.put(name, current);
            } else if (current != null) {
                current.instructions().add(instruction);
            }
        }
        return stages;
    }

    private static String brokerVersion() throws IOException {
        String version = pomProperty("artemis.broker.version");
        assertThat(Build.artemisHome().getFileName().toString()).isEqualTo("apache-artemis-" + version);
        return version;
    }

    private static String pomProperty(String name) throws IOException {
        Matcher m = Pattern.compile("<" + Pattern.quote(name) + ">([^<]+)</" + Pattern.quote(name) + ">")
                .matcher(Files.readString(Path.of("pom.xml")));
        assertThat(m.find()).as(name).isTrue();
        return m.group(1);
    }

    private static Map<String, Object> yaml(Path file) throws IOException {
        try (Reader reader = Files.newBufferedReader(file)) {
            return new Yaml().load(reader);
        }
    }

    /** A Prometheus configuration's static targets, by job. */
    @SuppressWarnings("unchecked")
    private static Map<String, List<String>> targetsByJob(Map<String, Object> prometheus) {
        Map<String, List<String>> targets = new LinkedHashMap<>();
        for (Map<String, Object> job : (List<Map<String, Object>>) prometheus.get("scrape_configs")) {
            for (Map<String, Object> config : (List<Map<String, Object>>) job.get("static_configs")) {
                targets.computeIfAbsent((String) job.get("job_name"), name -> new ArrayList<>())
                        .addAll((List<String>) config.get("targets"));
            }
        }
        return targets;
    }

    private static Map<String, Object> compose() throws IOException {
        return yaml(COMPOSE);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> service(String name) throws IOException {
        return new HashMap<>(((Map<String, Map<String, Object>>) compose().get("services")).get(name));
    }

    /** Every setting (server-config/configuration.properties). */
    private static Set<String> documentedSettings() {
        return new LinkedHashSet<>(Settings.configuration().keySet());
    }
}
