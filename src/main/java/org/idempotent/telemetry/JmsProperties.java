package org.idempotent.telemetry;

import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapSetter;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import java.util.Collections;
import java.util.List;

/**
 * A message's string properties as the carrier of its trace context: how a producer's {@code traceparent} is read
 * (over any protocol the broker speaks: an AMQP or STOMP producer's application properties arrive as properties too)
 * and how the relay's is written.
 */
enum JmsProperties implements TextMapGetter<Message>, TextMapSetter<Message> {
    CARRIER;

    @Override
    public Iterable<String> keys(Message message) {
        try {
            return Collections.list(message.getPropertyNames()).stream()
                    .map(String::valueOf)
                    .toList();
        } catch (JMSException unreadable) {
            // Only a propagator that looks for keys it does not know asks; W3C Trace Context names its own.
            return List.of();
        }
    }

    @Override
    public String get(Message message, String key) {
        if (message == null) {
            return null;
        }
        try {
            return message.propertyExists(key) ? message.getStringProperty(key) : null;
        } catch (JMSException | RuntimeException unreadable) {
            // A property that is not a string (a producer's mistake) is no trace context: the delivery starts a trace.
            return null;
        }
    }

    @Override
    public void set(Message message, String key, String value) {
        try {
            message.setStringProperty(key, value);
        } catch (JMSException e) {
            throw new IllegalStateException("cannot set the message property " + key + ": " + e.getMessage(), e);
        }
    }
}
