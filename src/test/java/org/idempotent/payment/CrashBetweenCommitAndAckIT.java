package org.idempotent.payment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import jakarta.jms.JMSException;
import jakarta.jms.TextMessage;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.idempotent.loadgen.PaymentProducer;
import org.idempotent.stack.Build;
import org.idempotent.stack.FreePort;
import org.idempotent.stack.InstanceMetrics;
import org.idempotent.stack.Ledger;
import org.idempotent.stack.PayaraMicroProcess;
import org.idempotent.stack.Settings;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;

/**
 * The consumer JVM dies after the database commit and before the acknowledgement. The broker still has the message,
 * redelivers it to the restarted consumer, and the dedup record turns it into a duplicate: the money moved once.
 */
class CrashBetweenCommitAndAckIT {

    @Test
    void crashBetweenCommitAndAckIsRedeliveredAndCountedAsDuplicate() throws Exception {
        Settings settings = Settings.fromEnvironment()
                .with("PAYMENTS_QUEUE", "payments.crash-it")
                .with("HTTP_PORT", String.valueOf(FreePort.find()));
        Path war = crashHookWar(settings);
        Ledger ledger = new Ledger(settings);
        String prefix = "crash-" + UUID.randomUUID().toString().substring(0, 8);
        Map<String, Long> expected = new HashMap<>();
        List<UUID> ids = new ArrayList<>();
        UUID marked = UUID.randomUUID();
        String markedAccount = prefix + "-marked";

        try (PayaraMicroProcess first = PayaraMicroProcess.start("crash-it-1", settings, war, false)) {
            first.awaitReady(Duration.ofMinutes(3));
            try (PaymentProducer producer = new PaymentProducer(settings)) {
                sendEvents(producer, prefix + "-a", 40, expected, ids);
                TextMessage crash = producer.session().createTextMessage(PaymentProducer.json(marked, markedAccount, 4242));
                crash.setBooleanProperty(HaltAfterCommit.PROPERTY, true);
                producer.send(crash);
                sendEvents(producer, prefix + "-b", 40, expected, ids);
            }
            assertThat(first.await(Duration.ofMinutes(2))).as("the consumer JVM halts on the marked message").isTrue();
            assertThat(first.exitValue()).isEqualTo(HaltAfterCommit.EXIT_CODE);
        }
        assertThat(ledger.isProcessed(marked)).as("the transaction committed before the crash").isTrue();
        assertThat(ledger.balance(markedAccount)).isEqualTo(4242);
        expected.put(markedAccount, 4242L);
        ids.add(marked);

        try (PayaraMicroProcess second = PayaraMicroProcess.start("crash-it-2", settings, war, false)) {
            second.awaitReady(Duration.ofMinutes(3));
            InstanceMetrics metrics = new InstanceMetrics(second);

            await().atMost(Duration.ofMinutes(2)).untilAsserted(() -> {
                assertThat(ledger.processedCount(ids)).isEqualTo(ids.size());
                assertThat(metrics.outcome("duplicate")).as("the marked message, redelivered").isGreaterThanOrEqualTo(1);
            });
            expected.forEach((account, balance) -> assertThat(ledger.balance(account)).as(account).isEqualTo(balance));
            assertThat(metrics.outcome("failed")).isZero();
        }
    }

    private static void sendEvents(PaymentProducer producer, String account, int count, Map<String, Long> expected,
            List<UUID> ids) throws JMSException {
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
                .addAsWebInfResource(Path.of("target", "test-classes", "crash-hook", "ejb-jar.xml").toFile(), "ejb-jar.xml")
                .as(ZipExporter.class)
                .exportTo(war.toFile(), true);
        return war;
    }
}
