package org.idempotent.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.idempotent.fixtures.Ledger;
import org.idempotent.loadgen.PaymentProducer;
import org.idempotent.stack.Build;
import org.idempotent.stack.Database;
import org.idempotent.stack.FreePort;
import org.idempotent.stack.InstanceMetrics;
import org.idempotent.stack.PayaraMicroProcess;
import org.idempotent.stack.Settings;
import org.junit.jupiter.api.Test;

/**
 * A fresh database and a backlog already waiting in the queue: the consumer must not take a message before the
 * schema exists (the endpoint activates before a {@code @Startup} bean finishes, unless the consumer waits for it).
 */
class SchemaMigrationIT {

    @Test
    void backlogOnAFreshDatabaseIsConsumedWithoutASingleFailure() throws Exception {
        Settings settings = Settings.fromEnvironment()
                .with("DB_NAME", "payments_it_fresh")
                .with("PAYMENTS_QUEUE", "it.backlog")
                .with("HTTP_PORT", String.valueOf(FreePort.find()));
        Database.recreate(settings);
        Map<String, Long> expected = new HashMap<>();
        List<UUID> ids = new ArrayList<>();
        int messages = 400;
        try (PaymentProducer producer = new PaymentProducer(settings)) {
            for (int i = 0; i < messages; i++) {
                UUID id = i % 5 == 4 ? ids.get(i / 2) : UUID.randomUUID(); // every 5th message repeats an event
                String account = "backlog-" + (id.hashCode() & 7);
                long amount = 1 + (id.getLeastSignificantBits() & 0xfff);
                if (!ids.contains(id)) {
                    ids.add(id);
                    expected.merge(account, amount, Long::sum);
                }
                producer.sendText(PaymentProducer.json(id, account, amount));
            }
        }
        Ledger ledger = new Ledger(settings);

        try (PayaraMicroProcess micro = PayaraMicroProcess.startReady("backlog-it", settings, Build.WAR)) {
            InstanceMetrics metrics = new InstanceMetrics(micro);

            await().atMost(Duration.ofMinutes(2))
                    .untilAsserted(() -> assertThat(metrics.outcome("applied") + metrics.outcome("duplicate"))
                            .isEqualTo(messages));
            assertThat(metrics.outcome("applied")).isEqualTo(ids.size());
            assertThat(metrics.outcome("failed"))
                    .as("no message failed for want of a table")
                    .isZero();
            assertThat(metrics.outcome("rejected")).isZero();
            assertThat(ledger.processedCount(ids)).isEqualTo(ids.size());
            expected.forEach((account, balance) ->
                    assertThat(ledger.balance(account)).as(account).isEqualTo(balance));
            assertThat(Files.readString(micro.log())).doesNotContainPattern("relation \"[a-z_]+\" does not exist");
        }
    }
}
