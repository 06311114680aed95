package org.idempotent.telemetry;

/**
 * A W3C trace context as it travels outside a process: the {@code traceparent} and {@code tracestate} values, as a
 * message's string properties or an outbox row's columns carry them.
 *
 * @param traceparent null when there is none (the message came without one, or tracing was off)
 * @param tracestate null when there is none
 */
public record TraceContext(String traceparent, String tracestate) {

    /** The properties' and headers' names, W3C Trace Context's own. */
    public static final String TRACEPARENT = "traceparent";

    public static final String TRACESTATE = "tracestate";

    public static final TraceContext NONE = new TraceContext(null, null);

    /** {@link #NONE} when there is no traceparent (a column or property left empty). */
    public static TraceContext of(String traceparent, String tracestate) {
        return traceparent == null ? NONE : new TraceContext(traceparent, tracestate);
    }

    public boolean present() {
        return traceparent != null;
    }
}
