package org.idempotent.loadgen;

import jakarta.jms.JMSException;
import jakarta.jms.Message;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.idempotent.loadgen.MessageSet.Item;
import org.idempotent.stack.Settings;

/**
 * Producers: several threads, each sending its share of a {@link MessageSet} in transacted batches (one journal sync
 * per batch), as producer applications would: payments and malformed messages to the payments queue, then, once every
 * payment is on the broker, refunds to the refunds queue, as a refund follows its payment. A refund still arrives
 * before its payment is applied when a fault sends the payment back to the queue.
 */
public final class Traffic {

    /** W3C Trace Context's message property. */
    public static final String TRACEPARENT = "traceparent";

    /** The property that identifies a malformed message, to match the dead-letter queue against what was sent. */
    public static final String PROBE = "probe";

    private static final int DEFAULT_BATCH = 100;

    private final CompletableFuture<Void> done;
    private final AtomicInteger sent = new AtomicInteger();

    private Traffic(Settings settings, List<Item> items, int threads, int batch) {
        ExecutorService producers = Executors.newFixedThreadPool(threads);
        List<Item> refunds = items.stream().filter(Traffic::isRefund).toList();
        List<Item> payments = items.stream().filter(item -> !isRefund(item)).toList();
        done = inShares(settings, payments, threads, batch, producers)
                .thenCompose(ignored -> inShares(settings, refunds, threads, batch, producers))
                .whenComplete((ignored, failure) -> producers.shutdown());
    }

    private CompletableFuture<Void> inShares(
            Settings settings, List<Item> items, int threads, int batch, ExecutorService producers) {
        CompletableFuture<?>[] shares = new CompletableFuture<?>[threads];
        for (int t = 0; t < threads; t++) {
            List<Item> share = items.subList(t * items.size() / threads, (t + 1) * items.size() / threads);
            shares[t] = CompletableFuture.runAsync(() -> send(settings, share, batch), producers);
        }
        return CompletableFuture.allOf(shares);
    }

    private static boolean isRefund(Item item) {
        return item.event() != null && item.event().isRefund();
    }

    /** Starts sending; {@link #await()} returns once everything is sent. */
    public static Traffic start(Settings settings, List<Item> items, int threads, int batch) {
        if (threads < 1 || batch < 1) {
            throw new IllegalArgumentException("need threads >= 1 and batch >= 1, got " + threads + ", " + batch);
        }
        return new Traffic(settings, items, threads, batch);
    }

    public static Traffic start(Settings settings, List<Item> items, int threads) {
        return start(settings, items, threads, DEFAULT_BATCH);
    }

    /** Sends everything, and returns once it is on the broker. */
    public static void sendAll(Settings settings, List<Item> items, int threads) {
        start(settings, items, threads).await();
    }

    /** Messages committed to the broker so far. */
    public int sent() {
        return sent.get();
    }

    public void await() {
        done.join();
    }

    private void send(Settings settings, List<Item> share, int batch) {
        try (PaymentProducer producer = new PaymentProducer(settings, settings.get("PAYMENTS_QUEUE"), true)) {
            int inBatch = 0;
            for (Item item : share) {
                send(settings, producer, item);
                if (++inBatch == batch) {
                    producer.commit();
                    sent.addAndGet(inBatch);
                    inBatch = 0;
                }
            }
            producer.commit();
            sent.addAndGet(inBatch);
        } catch (JMSException e) {
            throw new IllegalStateException("sending failed after " + sent.get() + " messages", e);
        }
    }

    /** The item to the queue of its kind, in the producer's session. */
    public static void send(Settings settings, PaymentProducer producer, Item item) throws JMSException {
        if (isRefund(item)) {
            producer.send(settings.get(item.event().queueSetting()), message(producer, item));
        } else {
            producer.send(message(producer, item));
        }
    }

    private static Message message(PaymentProducer producer, Item item) throws JMSException {
        Message message;
        if (item.event() != null) {
            message = producer.session().createTextMessage(item.event().json());
        } else {
            message = item.poison().create(producer.session(), item.probe());
            message.setStringProperty(PROBE, item.probe().toString());
        }
        message.setStringProperty(
                TRACEPARENT, traceparent(item.event() != null ? item.event().id() : item.probe()));
        return message;
    }

    /**
     * A traced producer's W3C traceparent: the trace ID is the event's ID (a poison message's probe) without its dashes,
     * so that a user finds a payment's trace by its ID; each send a span of its own, sampled. What a producer with an
     * OpenTelemetry SDK would send, without one.
     */
    public static String traceparent(UUID id) {
        long span;
        do {
            span = ThreadLocalRandom.current().nextLong();
        } while (span == 0);
        return "00-" + traceId(id) + "-" + String.format("%016x", span) + "-01";
    }

    /** The trace of an event sent by this traffic. */
    public static String traceId(UUID id) {
        return id.toString().replace("-", "");
    }
}
