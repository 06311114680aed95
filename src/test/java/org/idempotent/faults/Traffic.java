package org.idempotent.faults;

import jakarta.jms.JMSException;
import jakarta.jms.Message;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.idempotent.faults.Workload.Item;
import org.idempotent.loadgen.PaymentProducer;
import org.idempotent.stack.Settings;

/** Producers: several threads, each sending its share of the workload in transacted batches. */
final class Traffic {

    static final String PROBE = "probe";
    private static final int BATCH = 100;

    private final CompletableFuture<Void> done;
    private final AtomicInteger sent = new AtomicInteger();

    private Traffic(Settings settings, List<Item> items, int threads) {
        ExecutorService producers = Executors.newFixedThreadPool(threads);
        CompletableFuture<?>[] shares = new CompletableFuture<?>[threads];
        for (int t = 0; t < threads; t++) {
            List<Item> share = items.subList(t * items.size() / threads, (t + 1) * items.size() / threads);
            shares[t] = CompletableFuture.runAsync(() -> send(settings, share), producers);
        }
        done = CompletableFuture.allOf(shares).whenComplete((ignored, failure) -> producers.shutdown());
    }

    /** Starts sending; {@link #await()} returns once everything is sent. */
    static Traffic start(Settings settings, List<Item> items, int threads) {
        return new Traffic(settings, items, threads);
    }

    /** Sends everything, and returns once it is on the broker. */
    static void sendAll(Settings settings, List<Item> items, int threads) {
        start(settings, items, threads).await();
    }

    void await() {
        done.join();
    }

    private void send(Settings settings, List<Item> share) {
        try (PaymentProducer producer = new PaymentProducer(settings, settings.get("PAYMENTS_QUEUE"), true)) {
            int inBatch = 0;
            for (Item item : share) {
                producer.send(message(producer, item));
                if (++inBatch == BATCH) {
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

    private static Message message(PaymentProducer producer, Item item) throws JMSException {
        if (item.event() != null) {
            return producer.session()
                    .createTextMessage(PaymentProducer.json(
                            item.event().id(),
                            item.event().account(),
                            item.event().amountCents()));
        }
        Message poison = item.poison().create(producer.session(), item.probe());
        poison.setStringProperty(PROBE, item.probe().toString());
        return poison;
    }
}
