package org.idempotent.documents;

import jakarta.json.Json;
import jakarta.json.JsonValue;
import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.yaml.snakeyaml.Yaml;

/** The alert rules, the dashboard and the metrics the product exports, as their files and its code say them. */
final class Monitoring {

    static final Path RULES = Path.of("server-config", "prometheus", "payment-consumer-alerts.yml");
    static final Path RULE_TESTS = Path.of("server-config", "prometheus", "payment-consumer-alerts.test.yml");
    static final Path DASHBOARD = Path.of("server-config", "grafana", "payment-consumer.json");

    /** The families of the product's own series and the broker plugin's: what a document's metric name starts with. */
    static final Pattern METRIC =
            Pattern.compile("\\b(?:payments|announcement|retention|artemis)_[a-z0-9_]*[a-z0-9]\\b");

    /** How MicroProfile Metrics exports a name: a counter with _total, a histogram with its parts. */
    private static final List<String> SUFFIXES = List.of("", "_total", "_max", "_count", "_sum", "_bucket");

    private static final Pattern BROKER_METRIC = Pattern.compile("\\bartemis_[a-z0-9_]*[a-z0-9]\\b");
    private static final Pattern REGISTERED =
            Pattern.compile("\"((?:payments|announcement|retention)\\.[a-z0-9._]+)\"");

    record Alert(String name, String duration, String severity) {}

    private Monitoring() {}

    /** The rules' alerts by name, in their order; an alert without {@code for} fires at once ("-"). */
    @SuppressWarnings("unchecked")
    static Map<String, Alert> alerts() {
        Map<String, Object> rules = new Yaml().load(Codebase.read(RULES));
        Map<String, Alert> alerts = new LinkedHashMap<>();
        for (Map<String, Object> group : (List<Map<String, Object>>) rules.get("groups")) {
            for (Map<String, Object> rule : (List<Map<String, Object>>) group.get("rules")) {
                if (rule.get("alert") instanceof String name) {
                    Map<String, Object> labels = (Map<String, Object>) rule.getOrDefault("labels", Map.of());
                    alerts.put(
                            name,
                            new Alert(
                                    name,
                                    String.valueOf(rule.getOrDefault("for", "-")),
                                    String.valueOf(labels.get("severity"))));
                }
            }
        }
        return alerts;
    }

    static List<String> panelTitles() {
        return Json.createReader(new StringReader(Codebase.read(DASHBOARD)))
                .readObject()
                .getJsonArray("panels")
                .stream()
                .map(JsonValue::asJsonObject)
                .map(panel -> panel.getString("title"))
                .toList();
    }

    /**
     * Every series name the product registers (its dotted names as Prometheus spells them, with the suffixes of its
     * kind), and the broker's that the rules, their tests, the dashboard or the system tests read: Artemis names those,
     * not this code.
     */
    static Set<String> metrics() {
        Set<String> names = new TreeSet<>();
        for (Path source : Stream.of(Path.of("src", "main", "java"), Path.of("src", "broker", "java"))
                .flatMap(Monitoring::javaFiles)
                .toList()) {
            Matcher registered = REGISTERED.matcher(Codebase.read(source));
            while (registered.find()) {
                String name = registered.group(1).replace('.', '_');
                SUFFIXES.forEach(suffix -> names.add(name + suffix));
            }
        }
        List<Path> readers = Stream.concat(
                        Stream.of(RULES, RULE_TESTS, DASHBOARD),
                        Stream.of(Codebase.TESTS, Path.of("src", "tools", "java"))
                                .flatMap(Monitoring::javaFiles))
                .toList();
        for (Path file : readers) {
            Matcher read = BROKER_METRIC.matcher(Codebase.read(file));
            while (read.find()) {
                names.add(read.group());
            }
        }
        return names;
    }

    private static Stream<Path> javaFiles(Path folder) {
        try (Stream<Path> files = Files.walk(folder)) {
            return files.filter(f -> f.toString().endsWith(".java")).toList().stream();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
