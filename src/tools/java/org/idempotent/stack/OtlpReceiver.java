package org.idempotent.stack;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.GZIPInputStream;

/**
 * An OpenTelemetry collector's OTLP/HTTP endpoint (protobuf), in process: receives what Payara's MicroProfile
 * Telemetry exports, so that a test reads the spans a running consumer made, and a benchmark prices tracing with an
 * exporter that really sends. Answers every export with success; keeps traces (or, for a benchmark, only counts them),
 * acknowledges metrics and logs unread.
 */
public final class OtlpReceiver implements AutoCloseable {

    /**
     * One span as received: ids in lower-case hex, as W3C traceparent writes them (a root span's parent empty), kind
     * and status as OpenTelemetry's API names them (CONSUMER, ERROR).
     */
    public record ReceivedSpan(
            String service,
            String scope,
            String traceId,
            String spanId,
            String parentSpanId,
            String name,
            String kind,
            Map<String, String> attributes,
            String status,
            String statusMessage,
            long startNanos) {

        public String attribute(String key) {
            return attributes.get(key);
        }
    }

    private final HttpServer server;
    private final boolean keep;
    private final List<ReceivedSpan> spans = new ArrayList<>();
    private final AtomicLong count = new AtomicLong();

    private OtlpReceiver(boolean keep) throws IOException {
        this.keep = keep;
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/v1/traces", this::traces);
        server.createContext("/", exchange -> answer(exchange, 200));
        server.setExecutor(Executors.newFixedThreadPool(2));
        server.start();
    }

    /** A receiver that keeps every span it receives. */
    public static OtlpReceiver start() throws IOException {
        return new OtlpReceiver(true);
    }

    /** A receiver that counts spans and keeps none: a benchmark's, for hundreds of thousands of them. */
    public static OtlpReceiver counting() throws IOException {
        return new OtlpReceiver(false);
    }

    /** The base endpoint, as OTEL_EXPORTER_OTLP_ENDPOINT takes it: the exporter appends /v1/traces. */
    public String endpoint() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    public List<ReceivedSpan> spans() {
        synchronized (spans) {
            return List.copyOf(spans);
        }
    }

    public List<ReceivedSpan> trace(String traceId) {
        return spans().stream().filter(span -> span.traceId().equals(traceId)).toList();
    }

    public long received() {
        return count.get();
    }

    private void traces(HttpExchange exchange) throws IOException {
        ExportTraceServiceRequest request;
        try (InputStream body = body(exchange)) {
            request = ExportTraceServiceRequest.parseFrom(body);
        } catch (IOException e) {
            answer(exchange, 400);
            return;
        }
        List<ReceivedSpan> received = new ArrayList<>();
        for (ResourceSpans resource : request.getResourceSpansList()) {
            String service =
                    attributes(resource.getResource().getAttributesList()).getOrDefault("service.name", "");
            for (ScopeSpans scope : resource.getScopeSpansList()) {
                for (io.opentelemetry.proto.trace.v1.Span span : scope.getSpansList()) {
                    count.incrementAndGet();
                    if (keep) {
                        received.add(new ReceivedSpan(
                                service,
                                scope.getScope().getName(),
                                hex(span.getTraceId().toByteArray()),
                                hex(span.getSpanId().toByteArray()),
                                hex(span.getParentSpanId().toByteArray()),
                                span.getName(),
                                span.getKind().name().replace("SPAN_KIND_", ""),
                                attributes(span.getAttributesList()),
                                span.getStatus().getCode().name().replace("STATUS_CODE_", ""),
                                span.getStatus().getMessage(),
                                span.getStartTimeUnixNano()));
                    }
                }
            }
        }
        synchronized (spans) {
            spans.addAll(received);
        }
        answer(exchange, 200);
    }

    private static InputStream body(HttpExchange exchange) throws IOException {
        InputStream body = exchange.getRequestBody();
        return "gzip".equalsIgnoreCase(exchange.getRequestHeaders().getFirst("Content-Encoding"))
                ? new GZIPInputStream(body)
                : body;
    }

    /** An empty protobuf message is an empty body: the export succeeded, nothing rejected. */
    private static void answer(HttpExchange exchange, int status) throws IOException {
        exchange.getRequestBody().readAllBytes();
        exchange.getResponseHeaders().set("Content-Type", "application/x-protobuf");
        exchange.sendResponseHeaders(status, -1);
        exchange.close();
    }

    private static Map<String, String> attributes(List<KeyValue> attributes) {
        Map<String, String> values = new LinkedHashMap<>();
        for (KeyValue attribute : attributes) {
            values.put(attribute.getKey(), text(attribute.getValue()));
        }
        return values;
    }

    private static String text(AnyValue value) {
        return switch (value.getValueCase()) {
            case STRING_VALUE -> value.getStringValue();
            case BOOL_VALUE -> String.valueOf(value.getBoolValue());
            case INT_VALUE -> String.valueOf(value.getIntValue());
            case DOUBLE_VALUE -> String.valueOf(value.getDoubleValue());
            default -> value.toString();
        };
    }

    private static String hex(byte[] bytes) {
        return HexFormat.of().formatHex(bytes);
    }

    @Override
    public void close() {
        server.stop(0);
        ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
    }
}
