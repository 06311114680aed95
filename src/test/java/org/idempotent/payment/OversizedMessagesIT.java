package org.idempotent.payment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import jakarta.jms.BytesMessage;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.idempotent.loadgen.PaymentProducer;
import org.idempotent.payment.control.MessageProperties;
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
 * BODY_TOO_LARGE at once, sixteen at a time, without an OutOfMemoryError and without keeping any of them: the live
 * heap after a full collection is what it was before them.
 */
class OversizedMessagesIT {

    private static final int HUNDRED_MB = 100 * 1024 * 1024;
    /** Under the broker's 1 MiB as stored: Artemis encodes a text as two bytes a character. */
    private static final int LARGE_TEXT_CHARACTERS = 400_000;

    private static final int LARGE_BYTES = 900_000;
    /** A generation's line in jcmd's GC.heap_info: "PSYoungGen total 76288K, used 1234K [...". */
    private static final Pattern USED = Pattern.compile("(?m)^ \\S+Gen\\s+total \\d+K, used (\\d+)K");

    private static final Path JCMD = Path.of(System.getProperty("java.home"), "bin", "jcmd");

    @Test
    void hundredMegabyteMessagesAreRefusedAtTheBrokerAndLargeOnesDeadLetteredWithoutExhaustingTheHeap()
            throws Exception {
        Settings settings = Settings.fromEnvironment()
                .with("PAYMENTS_QUEUE", "it.oversized")
                .with("CONSUMER_MAX_SESSIONS", "16")
                .with("HTTP_PORT", String.valueOf(FreePort.find()));
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

            // A first round grows what Payara and the client keep for large messages anyway (pools, caches); the
            // live heap is compared across the second, bigger round.
            deadLetterLarge(producer, deadLetters, 16);
            long liveBefore = liveHeap(micro);
            deadLetterLarge(producer, deadLetters, 64);

            assertThat(metrics.outcome("rejected") - rejected)
                    .as("each dead-lettered once, the refused never seen")
                    .isEqualTo(80);
            assertThat(metrics.outcome("failed")).isZero();
            assertThat(micro.await(Duration.ZERO)).as("still running").isFalse();
            assertThat(Files.readString(micro.log())).doesNotContain("OutOfMemoryError");
            // The second round's bodies take 41 MiB of heap (a text of these characters takes one byte each), its
            // texts alone 12 MiB: 6 MiB above the live heap before them is Payara's noise (0 measured) and not a
            // consumer that kept what it dead-lettered, or any part of it.
            long liveAfter = liveHeap(micro);
            assertThat((liveAfter - liveBefore) >> 20)
                    .as("live heap after a full collection, MiB above what it was before the large ones")
                    .isLessThanOrEqualTo(6);
            System.out.printf(
                    "oversized: 2 x 100 MB refused at the broker; 40 texts of %d characters and 40 bodies "
                            + "of %d bytes dead-lettered by Payara with -Xmx256m and 16 sessions, live heap %d MiB before, %d MiB after%n",
                    LARGE_TEXT_CHARACTERS, LARGE_BYTES, liveBefore >> 20, liveAfter >> 20);
        }
    }

    /** Sends {@code count} large messages, half texts and half bytes, and receives each dead-lettered as too large. */
    private static void deadLetterLarge(PaymentProducer producer, DeadLetterReader deadLetters, int count)
            throws JMSException {
        String probe = UUID.randomUUID().toString();
        for (int i = 0; i < count; i++) {
            Message large = i % 2 == 0
                    ? producer.session().createTextMessage("y".repeat(LARGE_TEXT_CHARACTERS))
                    : bytes(producer, LARGE_BYTES);
            large.setStringProperty("probe", probe);
            producer.send(large);
        }
        List<Message> dead = deadLetters.receive("probe = '" + probe + "'", count, Duration.ofMinutes(2));
        assertThat(dead).hasSize(count).allSatisfy(message -> {
            assertThat(message.getStringProperty(MessageProperties.REASON)).isEqualTo("BODY_TOO_LARGE");
            assertThat(message.getStringProperty(MessageProperties.DETAIL)).contains("limit 65536");
        });
    }

    private static BytesMessage bytes(PaymentProducer producer, int size) throws JMSException {
        BytesMessage message = producer.session().createBytesMessage();
        message.writeBytes(new byte[size]);
        return message;
    }

    /**
     * The instance's live heap: what its young and old generations hold right after a full collection, read with the
     * JDK's jcmd. A used-heap sample would count garbage not yet collected, which on a 256 MiB heap is anything up to
     * the whole of it.
     */
    private static long liveHeap(PayaraMicroProcess micro) throws IOException, InterruptedException {
        jcmd(micro, "GC.run");
        Matcher used = USED.matcher(jcmd(micro, "GC.heap_info"));
        long kilobytes = 0;
        int generations = 0;
        while (used.find()) {
            kilobytes += Long.parseLong(used.group(1));
            generations++;
        }
        assertThat(generations).as("generations in the heap report").isEqualTo(2);
        return kilobytes << 10;
    }

    private static String jcmd(PayaraMicroProcess micro, String command) throws IOException, InterruptedException {
        Process jcmd = new ProcessBuilder(JCMD.toString(), String.valueOf(micro.pid()), command)
                .redirectErrorStream(true)
                .start();
        String output = new String(jcmd.getInputStream().readAllBytes());
        assertThat(jcmd.waitFor()).as("jcmd %s: %s", command, output).isZero();
        return output;
    }
}
