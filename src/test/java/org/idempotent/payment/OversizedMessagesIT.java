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
import org.idempotent.delivery.control.MessageProperties;
import org.idempotent.loadgen.PaymentProducer;
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
 * heap after a full collection is what it was before them. The first round's bodies are a sixth of the second's, so
 * that a consumer that kept the last few bodies it refused (any number up to the whole round) holds more after the
 * second; and after each round a flush of small messages passes through every session, since each session keeps the
 * last message it acknowledged (the Artemis client's batched acknowledgement) and that alone is 16 bodies.
 */
class OversizedMessagesIT {

    private static final int HUNDRED_MB = 100 * 1024 * 1024;
    /** Under the broker's 1 MiB as stored: Artemis encodes a text as two bytes a character. */
    private static final int LARGE_TEXT_CHARACTERS = 400_000;

    private static final int LARGE_BYTES = 900_000;
    /** The first round's: over the consumer's 64 KiB and the client's 100 KiB large-message threshold both. */
    private static final int WARM_UP_TEXT_CHARACTERS = LARGE_TEXT_CHARACTERS / 6;

    private static final int WARM_UP_BYTES = LARGE_BYTES / 6;
    /** Messages after each round, four a session, of this many characters (under the consumer's 65,536). */
    private static final int FLUSH = 64;

    private static final int FLUSH_TEXT_CHARACTERS = 60_000;
    /** A generation's line in jcmd's GC.heap_info: "PSYoungGen total 76288K, used 1234K [...". */
    private static final Pattern USED = Pattern.compile("(?m)^ ?\\S+Gen\\s+total \\d+K, used (\\d+)K");

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
            // live heap is compared across the second round, of more and larger bodies.
            deadLetterLarge(producer, deadLetters, 16, WARM_UP_TEXT_CHARACTERS, WARM_UP_BYTES);
            flush(producer, deadLetters);
            long liveBefore = liveHeap(micro);
            deadLetterLarge(producer, deadLetters, 64, LARGE_TEXT_CHARACTERS, LARGE_BYTES);
            flush(producer, deadLetters);

            assertThat(metrics.outcome("rejected") - rejected)
                    .as("each dead-lettered once, the refused never seen")
                    .isEqualTo(80 + 2 * FLUSH);
            assertThat(metrics.outcome("failed")).isZero();
            assertThat(micro.await(Duration.ZERO)).as("still running").isFalse();
            assertThat(Files.readString(micro.log())).doesNotContain("OutOfMemoryError");
            // The second round's bodies take 41 MiB of heap (a text of these characters takes one byte each), its
            // texts alone 12 MiB: 6 MiB above the live heap before them is Payara's noise (0 measured) and not a
            // consumer that kept what it dead-lettered, or any part of it: one that kept the last 16 messages it
            // refused measured 18 MiB above.
            long liveAfter = liveHeap(micro);
            System.out.printf(
                    "oversized: 2 x 100 MB refused at the broker; 8 + 32 texts of %d then %d characters and 8 + 32"
                            + " bodies of %d then %d bytes dead-lettered by Payara with -Xmx256m and 16 sessions,"
                            + " live heap %d MiB before the second round, %d MiB after%n",
                    WARM_UP_TEXT_CHARACTERS,
                    LARGE_TEXT_CHARACTERS,
                    WARM_UP_BYTES,
                    LARGE_BYTES,
                    liveBefore >> 20,
                    liveAfter >> 20);
            assertThat((liveAfter - liveBefore) >> 20)
                    .as("live heap after a full collection, MiB above what it was before the second round")
                    .isLessThanOrEqualTo(6);
        }
    }

    /**
     * Messages through every session that take the client's large-message path (a text of 60,000 characters is 120 KB
     * as sent) and are within the consumer's limit, each dead-lettered as no JSON object: what a session keeps of the
     * last message it took is one of these after them, whatever came before.
     */
    private static void flush(PaymentProducer producer, DeadLetterReader deadLetters) throws JMSException {
        String probe = UUID.randomUUID().toString();
        for (int i = 0; i < FLUSH; i++) {
            Message small = producer.session().createTextMessage("z".repeat(FLUSH_TEXT_CHARACTERS));
            small.setStringProperty("probe", probe);
            producer.send(small);
        }
        assertThat(deadLetters.receive("probe = '" + probe + "'", FLUSH, Duration.ofMinutes(2)))
                .hasSize(FLUSH);
    }

    /** Sends {@code count} large messages, half texts and half bytes, and receives each dead-lettered as too large. */
    private static void deadLetterLarge(
            PaymentProducer producer, DeadLetterReader deadLetters, int count, int textCharacters, int bytes)
            throws JMSException {
        String probe = UUID.randomUUID().toString();
        for (int i = 0; i < count; i++) {
            Message large = i % 2 == 0
                    ? producer.session().createTextMessage("y".repeat(textCharacters))
                    : bytes(producer, bytes);
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
