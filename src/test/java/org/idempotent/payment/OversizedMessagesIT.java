package org.idempotent.payment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import jakarta.jms.BytesMessage;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.idempotent.loadgen.PaymentProducer;
import org.idempotent.payment.control.DeadLetters;
import org.idempotent.stack.Build;
import org.idempotent.stack.FreePort;
import org.idempotent.stack.InstanceMetrics;
import org.idempotent.stack.PayaraMicroProcess;
import org.idempotent.stack.Settings;
import org.junit.jupiter.api.Test;

/**
 * Oversized bodies against a consumer with a small heap (-Xmx256m, 16 sessions). The broker refuses anything over
 * its limit (1 MiB, the MessageSizeLimit plugin of broker.xml) at the send, so a 100 MB Text or Bytes message never
 * reaches Payara; everything up to that limit reaches it, is over the consumer's 64 KiB, and is dead-lettered with
 * BODY_TOO_LARGE at once, sixteen at a time, without an OutOfMemoryError.
 */
class OversizedMessagesIT {

    private static final int HUNDRED_MB = 100 * 1024 * 1024;
    /** Under the broker's 1 MiB as stored: Artemis encodes a text as two bytes a character. */
    private static final int LARGE_TEXT_CHARACTERS = 400_000;

    private static final int LARGE_BYTES = 900_000;
    private static final Pattern USED_HEAP = Pattern.compile("(?m)^memory_usedHeap_bytes\\{[^}]*} ([0-9.E+]+)$");
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @Test
    void hundredMegabyteMessagesAreRefusedAtTheBrokerAndLargeOnesDeadLetteredWithoutExhaustingTheHeap()
            throws Exception {
        Settings settings = Settings.fromEnvironment()
                .with("PAYMENTS_QUEUE", "it.oversized")
                .with("CONSUMER_MAX_SESSIONS", "16")
                .with("HTTP_PORT", String.valueOf(FreePort.find()));
        String probe = UUID.randomUUID().toString();
        String selector = "probe = '" + probe + "'";
        try (PayaraMicroProcess micro = PayaraMicroProcess.startReady("oversized-it", settings, Build.WAR, "-Xmx256m");
                DeadLetterReader deadLetters = new DeadLetterReader(settings);
                PaymentProducer producer = new PaymentProducer(settings)) {
            InstanceMetrics metrics = new InstanceMetrics(micro);
            long rejected = metrics.outcome("rejected");

            // One Text and one Bytes message: the refusal is the broker's, per message, whatever the type.
            for (int i = 0; i < 2; i++) {
                Message huge = i % 2 == 0
                        ? producer.session().createTextMessage("x".repeat(HUNDRED_MB))
                        : bytes(producer, HUNDRED_MB);
                assertThatThrownBy(() -> producer.send(huge))
                        .as("a 100 MB send is refused by the broker")
                        .isInstanceOf(JMSException.class)
                        .hasMessageContaining("refused");
            }

            AtomicLong peakHeap = new AtomicLong();
            AtomicInteger samples = new AtomicInteger();
            List<String> sampleErrors = new CopyOnWriteArrayList<>();
            ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
            sampler.scheduleAtFixedRate(
                    () -> {
                        try {
                            peakHeap.accumulateAndGet(usedHeap(micro), Math::max);
                            samples.incrementAndGet();
                        } catch (IOException | RuntimeException e) {
                            sampleErrors.add(e.toString());
                        }
                    },
                    0,
                    100,
                    TimeUnit.MILLISECONDS);
            try {
                for (int i = 0; i < 32; i++) {
                    Message large = i % 2 == 0
                            ? producer.session().createTextMessage("y".repeat(LARGE_TEXT_CHARACTERS))
                            : bytes(producer, LARGE_BYTES);
                    large.setStringProperty("probe", probe);
                    producer.send(large);
                }
                List<Message> dead = deadLetters.receive(selector, 32, Duration.ofMinutes(2));
                assertThat(dead).allSatisfy(message -> {
                    assertThat(message.getStringProperty(DeadLetters.REASON)).isEqualTo("BODY_TOO_LARGE");
                    assertThat(message.getStringProperty(DeadLetters.DETAIL)).contains("limit 65536");
                });
            } finally {
                sampler.shutdownNow();
            }

            assertThat(metrics.outcome("rejected") - rejected)
                    .as("each dead-lettered once, the refused never seen")
                    .isEqualTo(32);
            assertThat(metrics.outcome("failed")).isZero();
            assertThat(micro.await(Duration.ZERO)).as("still running").isFalse();
            assertThat(Files.readString(micro.log())).doesNotContain("OutOfMemoryError");
            assertThat(sampleErrors).as("heap samples that failed").isEmpty();
            assertThat(samples.get())
                    .as("heap samples taken while the large ones were handled")
                    .isGreaterThan(5);
            // 135 MiB measured: 16 sessions each holding one body under 1 MiB, twice over for a text's characters,
            // stay far below the heap; a consumer that buffered what it dead-letters would not.
            assertThat(peakHeap.get() >> 20)
                    .as("peak used heap, MiB, of a 256 MiB heap")
                    .isLessThanOrEqualTo(200);
            System.out.printf(
                    "oversized: 2 x 100 MB refused at the broker; 16 texts of %d characters and 16 bodies "
                            + "of %d bytes dead-lettered by Payara with -Xmx256m and 16 sessions, peak used heap sampled %d MiB%n",
                    LARGE_TEXT_CHARACTERS, LARGE_BYTES, peakHeap.get() >> 20);
        }
    }

    private static BytesMessage bytes(PaymentProducer producer, int size) throws JMSException {
        BytesMessage message = producer.session().createBytesMessage();
        message.writeBytes(new byte[size]);
        return message;
    }

    /** The instance's used heap, from its base metrics; a failed or unreadable sample throws. */
    private static long usedHeap(PayaraMicroProcess micro) throws IOException {
        try {
            String body = HTTP.send(
                            HttpRequest.newBuilder(micro.uri("/metrics?scope=base"))
                                    .timeout(Duration.ofSeconds(5))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString())
                    .body();
            Matcher m = USED_HEAP.matcher(body);
            if (!m.find()) {
                throw new IllegalStateException("no memory_usedHeap_bytes in the base metrics");
            }
            return (long) Double.parseDouble(m.group(1));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while sampling the heap", e);
        }
    }
}
