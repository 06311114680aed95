package org.idempotent.stack;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/** Reads the outcome counters of one Payara Micro instance from its /metrics endpoint. */
public final class InstanceMetrics {

    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private final PayaraInstance instance;

    public InstanceMetrics(PayaraInstance instance) {
        this.instance = instance;
    }

    /** The count of messages with this outcome (applied, duplicate, already_applied, rejected, failed). */
    public long outcome(String outcome) {
        String body = get("/metrics?scope=application");
        Matcher m = Pattern.compile("payments_messages_total\\{[^}]*outcome=\"" + outcome + "\"[^}]*} ([0-9.E]+)")
                .matcher(body);
        if (!m.find()) {
            throw new IllegalStateException("no counter for outcome " + outcome + " in:\n" + body);
        }
        return (long) Double.parseDouble(m.group(1));
    }

    /** Deliveries the broker marked as redelivered (payments_redeliveries_total). */
    public long redeliveries() {
        return (long) gauge("payments_redeliveries_total");
    }

    /** Any application metric without tags, by its Prometheus name. */
    public double gauge(String name) {
        String body = get("/metrics?scope=application");
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "\\{[^}]*} ([0-9.E+-]+)$")
                .matcher(body);
        if (!m.find()) {
            throw new IllegalStateException("no metric " + name + " at " + instance.uri("/metrics") + "; its lines of "
                    + "the family: " + family(body, name) + "; the metrics it shows: " + names(body));
        }
        return Double.parseDouble(m.group(1));
    }

    /** The lines that start with the name's first word, as the endpoint wrote them. */
    private static List<String> family(String body, String name) {
        String prefix = name.split("_", 2)[0];
        return body.lines().filter(line -> line.startsWith(prefix)).toList();
    }

    private static Set<String> names(String body) {
        return body.lines()
                .filter(line -> !line.startsWith("#") && !line.isBlank())
                .map(line -> line.split("[{ ]", 2)[0])
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /** Everything /metrics shows, every scope, in the Prometheus text format. */
    public String text() {
        return get("/metrics");
    }

    private String get(String path) {
        try {
            HttpResponse<String> response = HTTP.send(
                    HttpRequest.newBuilder(instance.uri(path))
                            .timeout(Duration.ofSeconds(10))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                throw new IllegalStateException(path + " answered " + response.statusCode() + ": " + response.body());
            }
            return response.body();
        } catch (IOException e) {
            throw new IllegalStateException(path, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(path, e);
        }
    }
}
