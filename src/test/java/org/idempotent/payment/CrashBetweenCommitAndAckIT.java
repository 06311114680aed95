package org.idempotent.payment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.TextMessage;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.idempotent.delivery.control.MessageProperties;
import org.idempotent.fixtures.Ledger;
import org.idempotent.loadgen.PaymentProducer;
import org.idempotent.stack.Build;
import org.idempotent.stack.FreePort;
import org.idempotent.stack.InstanceMetrics;
import org.idempotent.stack.PayaraMicroProcess;
import org.idempotent.stack.Settings;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The consumer JVM dies after the database commit and before the acknowledgement. The broker still has the message,
 * redelivers it to the restarted consumer, and the dedup record turns it into a duplicate: the money moved once.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class CrashBetweenCommitAndAckIT {

    private final Settings settings = settings("it.crash");
    private final Path war = crashHookWar(settings);
    /** The JVM that took over after the first crash, which the second crash then kills: three JVMs, not four. */
    private PayaraMicroProcess survivor;

    @AfterAll
    void stopSurvivor() {
        if (survivor != null) {
            survivor.close();
        }
    }

    /**
     * The marked message is the only one the first JVM sees, so the one duplicate the second JVM counts is that very
     * message (everything sent afterwards is distinct and reaches only the second, which is not killed).
     */
    @Test
    @Order(1)
    void crashBetweenCommitAndAckIsRedeliveredAndCountedAsDuplicate() throws Exception {
        Ledger ledger = new Ledger(settings);
        String prefix = "crash-" + UUID.randomUUID().toString().substring(0, 8);
        Map<String, Long> expected = new HashMap<>();
        List<UUID> ids = new ArrayList<>();
        UUID marked = UUID.randomUUID();
        String markedAccount = prefix + "-marked";

        try (PayaraMicroProcess first = PayaraMicroProcess.startReady("crash-it-1", settings, war)) {
            try (PaymentProducer producer = new PaymentProducer(settings)) {
                TextMessage crash =
                        producer.session().createTextMessage(PaymentProducer.json(marked, markedAccount, 4242));
                crash.setBooleanProperty(HaltAfterCommit.PROPERTY, true);
                producer.send(crash);
            }
            assertThat(first.await(Duration.ofMinutes(2)))
                    .as("the consumer JVM halts on the marked message")
                    .isTrue();
            assertThat(first.exitValue()).isEqualTo(HaltAfterCommit.EXIT_CODE);
        }
        assertThat(ledger.isProcessed(marked))
                .as("the transaction committed before the crash")
                .isTrue();
        assertThat(ledger.balance(markedAccount)).isEqualTo(4242);
        expected.put(markedAccount, 4242L);
        ids.add(marked);

        survivor = PayaraMicroProcess.startReady("crash-it-2", settings, war);
        InstanceMetrics metrics = new InstanceMetrics(survivor);
        try (PaymentProducer producer = new PaymentProducer(settings)) {
            sendEvents(producer, prefix + "-a", 40, expected, ids);
            sendEvents(producer, prefix + "-b", 40, expected, ids);
        }

        await().atMost(Duration.ofMinutes(2)).untilAsserted(() -> {
            assertThat(ledger.processedCount(ids)).isEqualTo(ids.size());
            assertThat(metrics.outcome("duplicate"))
                    .as("the marked message, redelivered")
                    .isEqualTo(1);
        });
        assertThat(metrics.outcome("applied"))
                .as("only the events sent after the crash")
                .isEqualTo(80);
        expected.forEach((account, balance) ->
                assertThat(ledger.balance(account)).as(account).isEqualTo(balance));
        assertThat(metrics.outcome("failed")).isZero();
    }

    /**
     * The JVM dies after a malformed message was forwarded to the dead-letter queue and before it was acknowledged:
     * the redelivery is rejected again, and the broker's duplicate detection drops the second forward. A dead letter
     * that is then replayed (moved back with its properties, as {@code artemis transfer} does) and rejected again
     * lands in the dead-letter queue again.
     */
    @Test
    @Order(2)
    void crashAfterADeadLetterForwardLeavesOneCopyAndAReplayLandsAgain() throws Exception {
        String probe = UUID.randomUUID().toString();
        String selector = "probe = '" + probe + "'";

        PayaraMicroProcess running =
                survivor != null ? survivor : PayaraMicroProcess.startReady("crash-it-2", settings, war);
        survivor = null;
        try (PayaraMicroProcess first = running) {
            try (PaymentProducer producer = new PaymentProducer(settings)) {
                TextMessage poison = producer.session().createTextMessage("not a payment");
                poison.setBooleanProperty(HaltAfterCommit.PROPERTY, true);
                poison.setStringProperty("probe", probe);
                producer.send(poison);
            }
            assertThat(first.await(Duration.ofMinutes(2)))
                    .as("the consumer JVM halts after the forward")
                    .isTrue();
            assertThat(first.exitValue()).isEqualTo(HaltAfterCommit.EXIT_CODE);
        }

        try (PayaraMicroProcess second = PayaraMicroProcess.startReady("crash-it-3", settings, war);
                DeadLetterReader deadLetters = new DeadLetterReader(settings)) {
            InstanceMetrics metrics = new InstanceMetrics(second);
            await().atMost(Duration.ofMinutes(2))
                    .untilAsserted(() -> assertThat(metrics.outcome("rejected"))
                            .as("the redelivery, rejected again")
                            .isEqualTo(1));

            List<Message> copies = deadLetters.receive(selector, 1, Duration.ofSeconds(30));
            Message deadLetter = copies.get(0);
            assertThat(deadLetter.getStringProperty(MessageProperties.REASON)).isEqualTo("MALFORMED_JSON");

            try (PaymentProducer producer = new PaymentProducer(settings)) {
                producer.send(replayOf(producer, deadLetter));
            }
            await().atMost(Duration.ofMinutes(1))
                    .untilAsserted(() -> assertThat(metrics.outcome("rejected"))
                            .as("the replay, rejected")
                            .isEqualTo(2));
            Message again =
                    deadLetters.receive(selector, 1, Duration.ofSeconds(30)).get(0);
            assertThat(again.getLongProperty(MessageProperties.REJECTED_AT))
                    .isGreaterThan(deadLetter.getLongProperty(MessageProperties.REJECTED_AT));
        }
    }

    /** The dead letter with its body and properties, as a transfer back would send it, less the crash marker. */
    private static Message replayOf(PaymentProducer producer, Message deadLetter) throws JMSException {
        TextMessage replay = producer.session().createTextMessage(((TextMessage) deadLetter).getText());
        for (Object name : Collections.list(deadLetter.getPropertyNames())) {
            String property = (String) name;
            if (!property.startsWith("JMSX") && !property.equals(HaltAfterCommit.PROPERTY)) {
                replay.setObjectProperty(property, deadLetter.getObjectProperty(property));
            }
        }
        return replay;
    }

    private static Settings settings(String queue) {
        return Settings.fromEnvironment()
                .with("PAYMENTS_QUEUE", queue)
                .with("HTTP_PORT", String.valueOf(FreePort.find()));
    }

    private static void sendEvents(
            PaymentProducer producer, String account, int count, Map<String, Long> expected, List<UUID> ids)
            throws JMSException {
        for (int i = 1; i <= count; i++) {
            UUID id = UUID.randomUUID();
            producer.sendText(PaymentProducer.json(id, account, i));
            expected.merge(account, (long) i, Long::sum);
            ids.add(id);
        }
    }

    /** The product WAR plus the crash hook, bound to the consumer by an ejb-jar.xml. */
    private static Path crashHookWar(Settings settings) {
        Path war = settings.stackDir().resolve("crash-hook.war");
        ShrinkWrap.createFromZipFile(WebArchive.class, Build.WAR.toFile())
                .addClass(HaltAfterCommit.class)
                .addAsWebInfResource(
                        Path.of("target", "test-classes", "crash-hook", "ejb-jar.xml")
                                .toFile(),
                        "ejb-jar.xml")
                .as(ZipExporter.class)
                .exportTo(war.toFile(), true);
        return war;
    }
}
