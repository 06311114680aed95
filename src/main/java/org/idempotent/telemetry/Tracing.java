package org.idempotent.telemetry;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.jms.Message;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * The application's spans, through MicroProfile Telemetry (the OpenTelemetry API and SDK that Payara provides, one
 * SDK per application, configured by its {@code otel.*} keys): Payara traces JAX-RS requests on its own, but not
 * message-driven beans or JMS, so a delivery, its statements and the relay's publishes are traced here.
 *
 * <p>Off unless {@code otel.sdk.disabled} is false, which {@link TracingDefaults} makes it once an OTLP endpoint is
 * configured. Off, nothing here makes a span or reads a message's properties: Payara's disabled SDK still builds real
 * spans and only drops them, so the check is ours, once, at start.
 */
@ApplicationScoped
public class Tracing {

    /** MicroProfile Telemetry's switch; true (off) unless set, as Payara reads it. */
    public static final String DISABLED = "otel.sdk.disabled";

    /** The instrumentation scope of every span the application makes. */
    static final String SCOPE = "org.idempotent.payment-consumer";

    public static final AttributeKey<String> MESSAGING_SYSTEM = AttributeKey.stringKey("messaging.system");
    public static final AttributeKey<String> MESSAGING_DESTINATION =
            AttributeKey.stringKey("messaging.destination.name");
    public static final AttributeKey<String> MESSAGING_OPERATION = AttributeKey.stringKey("messaging.operation");
    public static final AttributeKey<String> MESSAGING_MESSAGE_ID = AttributeKey.stringKey("messaging.message.id");
    /** The event a span is about: the producer's ID, the same on every copy. */
    public static final AttributeKey<String> EVENT_ID = AttributeKey.stringKey("payments.event.id");

    public static final AttributeKey<String> DB_SYSTEM = AttributeKey.stringKey("db.system");
    public static final AttributeKey<String> DB_OPERATION = AttributeKey.stringKey("db.operation");
    public static final AttributeKey<String> DB_TABLE = AttributeKey.stringKey("db.sql.table");

    /** The messaging system as OpenTelemetry's semantic conventions name Artemis's family. */
    static final String ACTIVEMQ = "activemq";

    private static final TextMapGetter<Map<String, String>> STORED = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> carrier) {
            return carrier.keySet();
        }

        @Override
        public String get(Map<String, String> carrier, String key) {
            return carrier == null ? null : carrier.get(key);
        }
    };

    @Inject
    OpenTelemetry telemetry;

    @Inject
    @ConfigProperty(name = DISABLED)
    Optional<Boolean> disabled;

    private boolean on;
    private Tracer tracer;
    private TextMapPropagator propagator;

    @PostConstruct
    void start() {
        on = !disabled.orElse(true);
        if (on) {
            tracer = telemetry.getTracer(SCOPE);
            propagator = telemetry.getPropagators().getTextMapPropagator();
        }
    }

    public boolean on() {
        return on;
    }

    /**
     * A span of a message's processing, made current until the returned scope is closed, parented on the context the
     * message carries (a message without one starts a trace); null when tracing is off.
     */
    public Traced consumer(Message message, String destination, String messageId) {
        if (!on) {
            return null;
        }
        Span span = tracer.spanBuilder(destination + " process")
                .setSpanKind(SpanKind.CONSUMER)
                .setParent(propagator.extract(Context.root(), message, JmsProperties.CARRIER))
                .setAttribute(MESSAGING_SYSTEM, ACTIVEMQ)
                .setAttribute(MESSAGING_DESTINATION, destination)
                .setAttribute(MESSAGING_OPERATION, "process")
                .setAttribute(MESSAGING_MESSAGE_ID, messageId)
                .startSpan();
        return new Traced(span, span.makeCurrent());
    }

    /**
     * A span of a publication to {@code destination}, made current, parented on a stored context (an outbox row's):
     * the same trace as the transaction that wrote the row, however long the row waited; a root span if there is none.
     */
    public Traced producer(String destination, TraceContext parent) {
        if (!on) {
            return null;
        }
        Span span = tracer.spanBuilder(destination + " publish")
                .setSpanKind(SpanKind.PRODUCER)
                .setParent(
                        parent.present() ? propagator.extract(Context.root(), carrier(parent), STORED) : Context.root())
                .setAttribute(MESSAGING_SYSTEM, ACTIVEMQ)
                .setAttribute(MESSAGING_DESTINATION, destination)
                .setAttribute(MESSAGING_OPERATION, "publish")
                .startSpan();
        return new Traced(span, span.makeCurrent());
    }

    /**
     * Runs one statement's work in a CLIENT span of its own (a child of the current span), or just runs it when
     * tracing is off.
     */
    public <T> T statement(String name, String operation, String table, Supplier<T> work) {
        if (!on) {
            return work.get();
        }
        Span span = tracer.spanBuilder(name)
                .setSpanKind(SpanKind.CLIENT)
                .setAttribute(DB_SYSTEM, "postgresql")
                .setAttribute(DB_OPERATION, operation)
                .setAttribute(DB_TABLE, table)
                .startSpan();
        try (Scope current = span.makeCurrent()) {
            return work.get();
        } catch (RuntimeException e) {
            span.recordException(e);
            span.setStatus(StatusCode.ERROR, e.getClass().getSimpleName());
            throw e;
        } finally {
            span.end();
        }
    }

    /** The current span's context, to store beside what it wrote (an outbox row); none when tracing is off. */
    public TraceContext current() {
        if (!on) {
            return TraceContext.NONE;
        }
        Map<String, String> headers = new HashMap<>(2);
        propagator.inject(Context.current(), headers, Map::put);
        return new TraceContext(headers.get(TraceContext.TRACEPARENT), headers.get(TraceContext.TRACESTATE));
    }

    /**
     * Writes the current span's context into an outgoing message; off, a stored context is passed on as it is (an
     * intermediary that does not trace forwards what it received), so a subscriber still continues its producer's
     * trace.
     */
    public void inject(Message message, TraceContext stored) {
        if (on) {
            propagator.inject(Context.current(), message, JmsProperties.CARRIER);
        } else if (stored.present()) {
            JmsProperties.CARRIER.set(message, TraceContext.TRACEPARENT, stored.traceparent());
            if (stored.tracestate() != null) {
                JmsProperties.CARRIER.set(message, TraceContext.TRACESTATE, stored.tracestate());
            }
        }
    }

    private static Map<String, String> carrier(TraceContext context) {
        Map<String, String> carrier = new HashMap<>(2);
        carrier.put(TraceContext.TRACEPARENT, context.traceparent());
        if (context.tracestate() != null) {
            carrier.put(TraceContext.TRACESTATE, context.tracestate());
        }
        return carrier;
    }

    /** A span and the scope that makes it current: closing ends both, the scope first. */
    public record Traced(Span span, Scope scope) implements AutoCloseable {

        @Override
        public void close() {
            scope.close();
            span.end();
        }
    }
}
