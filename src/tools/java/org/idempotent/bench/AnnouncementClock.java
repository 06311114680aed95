package org.idempotent.bench;

import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.json.Json;
import java.io.StringReader;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory;
import org.idempotent.stack.Settings;

/**
 * A downstream subscriber on the announcement queue for the whole benchmark: it keeps the queue drained (a queue
 * nobody reads would fill the broker over a dozen passes) and measures each announcement's latency, from the commit
 * (appliedAt, PostgreSQL's clock_timestamp() just before it, on this machine's clock) to its arrival here.
 */
final class AnnouncementClock implements AutoCloseable {

    private static final String QUEUE = "payments.applied::payments.applied.ledger";

    private final Connection connection;
    private final List<Double> latencyMillis = Collections.synchronizedList(new ArrayList<>());
    private final AtomicLong received = new AtomicLong();

    AnnouncementClock(Settings settings) throws JMSException {
        connection = new ActiveMQConnectionFactory(
                        settings.brokerUrl(),
                        settings.get("BROKER_OPERATOR_USER"),
                        settings.get("BROKER_OPERATOR_PASSWORD"))
                .createConnection();
        Session session = connection.createSession(false, Session.DUPS_OK_ACKNOWLEDGE);
        MessageConsumer consumer = session.createConsumer(session.createQueue(QUEUE));
        consumer.setMessageListener(this::arrived);
        connection.start();
    }

    private void arrived(Message message) {
        Instant now = Instant.now();
        try {
            String appliedAt = Json.createReader(new StringReader(((TextMessage) message).getText()))
                    .readObject()
                    .getString("appliedAt");
            latencyMillis.add(Duration.between(Instant.parse(appliedAt), now).toNanos() / 1e6);
            received.incrementAndGet();
        } catch (JMSException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Forgets the samples so far; returns how many announcements arrived since the last reset. */
    long reset() {
        latencyMillis.clear();
        return received.getAndSet(0);
    }

    long received() {
        return received.get();
    }

    /** "p50 x ms, p99 y ms, p99.9 z ms (n samples)" over the samples since the last reset. */
    String percentiles() {
        List<Double> sorted;
        synchronized (latencyMillis) {
            sorted = new ArrayList<>(latencyMillis);
        }
        if (sorted.isEmpty()) {
            return "no samples";
        }
        Collections.sort(sorted);
        return String.format(
                Locale.ROOT,
                "p50 %.1f ms, p99 %.1f ms, p99.9 %.1f ms, max %.1f ms (%d announcements)",
                at(sorted, 0.50),
                at(sorted, 0.99),
                at(sorted, 0.999),
                sorted.get(sorted.size() - 1),
                sorted.size());
    }

    double p99() {
        List<Double> sorted;
        synchronized (latencyMillis) {
            sorted = new ArrayList<>(latencyMillis);
        }
        Collections.sort(sorted);
        return sorted.isEmpty() ? Double.NaN : at(sorted, 0.99);
    }

    private static double at(List<Double> sorted, double quantile) {
        return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(quantile * sorted.size()) - 1));
    }

    @Override
    public void close() throws JMSException {
        connection.close();
    }
}
