package org.idempotent.stack;

import jakarta.json.Json;
import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
import java.io.IOException;
import java.io.StringReader;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.stream.Collectors;

/** Calls the admin API of one instance, with or without credentials. */
public final class AdminClient {

    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private final PayaraInstance instance;
    private final String authorization;

    private AdminClient(PayaraInstance instance, String authorization) {
        this.instance = instance;
        this.authorization = authorization;
    }

    public static AdminClient as(PayaraInstance instance, String user, String password) {
        String token = Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
        return new AdminClient(instance, "Basic " + token);
    }

    public static AdminClient anonymous(PayaraInstance instance) {
        return new AdminClient(instance, null);
    }

    public HttpResponse<String> get(String path) {
        return send(request(path).GET());
    }

    /** A bodiless POST, marked as not from a browser form (the admin API refuses those: AdminCallOrigin). */
    public HttpResponse<String> post(String path) {
        return send(request(path)
                .header("X-Requested-By", "payment-consumer-tools")
                .POST(HttpRequest.BodyPublishers.noBody()));
    }

    /**
     * {@link #postJson(String)} waiting up to {@code timeout} for the answer: a purge answers when its time budget
     * (RETENTION_TIME_BUDGET_SECONDS, 300 s as shipped) is spent, later than the usual timeout.
     */
    public JsonObject postJson(String path, Duration timeout) {
        HttpResponse<String> response = send(request(path)
                .timeout(timeout)
                .header("X-Requested-By", "payment-consumer-tools")
                .POST(HttpRequest.BodyPublishers.noBody()));
        if (response.statusCode() != 200) {
            throw new IllegalStateException(path + " answered " + response.statusCode() + ": " + response.body());
        }
        return json(response);
    }

    /** A POST with a JSON object of string fields, e.g. {"reason": "..."}. */
    public HttpResponse<String> postJson(String path, Map<String, String> fields) {
        JsonObjectBuilder body = Json.createObjectBuilder();
        fields.forEach(body::add);
        return send(request(path)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body.build().toString())));
    }

    /** What a web page can make a browser send: an HTML form POST (application/x-www-form-urlencoded). */
    public HttpResponse<String> postHtmlForm(String path, Map<String, String> fields) {
        String form = fields.entrySet().stream()
                .map(field -> URLEncoder.encode(field.getKey(), StandardCharsets.UTF_8) + "="
                        + URLEncoder.encode(field.getValue(), StandardCharsets.UTF_8))
                .collect(Collectors.joining("&"));
        return send(request(path)
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(form)));
    }

    /** Parses a JSON object answer. */
    public static JsonObject json(HttpResponse<String> response) {
        return Json.createReader(new StringReader(response.body())).readObject();
    }

    /** Parses a JSON array answer. */
    public static JsonArray array(HttpResponse<String> response) {
        return Json.createReader(new StringReader(response.body())).readArray();
    }

    /** POST that must answer 200 with a JSON object. */
    public JsonObject postJson(String path) {
        HttpResponse<String> response = post(path);
        if (response.statusCode() != 200) {
            throw new IllegalStateException(path + " answered " + response.statusCode() + ": " + response.body());
        }
        return json(response);
    }

    private HttpRequest.Builder request(String path) {
        HttpRequest.Builder builder = HttpRequest.newBuilder(instance.uri("/payment-consumer/api" + path))
                .timeout(Duration.ofMinutes(5));
        return authorization == null ? builder : builder.header("Authorization", authorization);
    }

    private static HttpResponse<String> send(HttpRequest.Builder request) {
        try {
            return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
