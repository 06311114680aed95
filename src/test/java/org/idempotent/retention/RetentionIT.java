package org.idempotent.retention;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import jakarta.json.JsonObject;
import java.io.StringReader;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.stream.Collectors;
import org.idempotent.fixtures.RunningConsumer;
import org.idempotent.loadgen.PaymentProducer;
import org.idempotent.stack.AdminClient;
import org.idempotent.stack.Build;
import org.idempotent.stack.FreePort;
import org.idempotent.stack.InstanceMetrics;
import org.idempotent.stack.PayaraMicroProcess;
import org.idempotent.stack.Settings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The purge of processed_events, on a database of its own, driven through the admin API. */
class RetentionIT {

    private static final Duration EXPIRED = Duration.ofDays(20);
    private static final Duration WINDOW = Duration.ofDays(14);

    @RegisterExtension
    static final RunningConsumer consumer = RunningConsumer.on("retention-it", "it.retention")
            .ownDatabase("payments_it_retention")
            .with("RETENTION_BATCH_SIZE", "1000")
            // The timer stays out of the way: these tests start every purge themselves.
            .with("RETENTION_SCHEDULE", "month=1;dayOfMonth=1;hour=0;minute=0");

    /**
     * The window's edge to the minute: a row a minute past it is purged, a row a minute short of it is kept (the rows
     * are written seconds before the purge reads its clock, well inside that minute).
     */
    @Test
    void expiredRowsArePurgedAcrossBatchesAndYoungerOnesKept() {
        consumer.admin().postJson("/admin/retention/purge");
        consumer.ledger().insertProcessed(25_000, EXPIRED);
        consumer.ledger().insertProcessed(500, WINDOW.plusMinutes(1));
        consumer.ledger().insertProcessed(700, WINDOW.minusMinutes(1));

        JsonObject run = consumer.admin().postJson("/admin/retention/purge");

        assertThat(run.getString("outcome")).isEqualTo("COMPLETED");
        assertThat(run.getJsonNumber("rowsDeleted").longValue()).isEqualTo(25_500);
        assertThat(run.getInt("batches"))
                .as("in the unpartitioned table of a new install: 26 batches of 1,000, the last one short")
                .isEqualTo(26);
        assertThat(consumer.ledger().processedAged(WINDOW, Duration.ofDays(365)))
                .isZero();
        assertThat(consumer.ledger().processedAged(WINDOW.minusMinutes(2), WINDOW))
                .as("a minute short of the window: kept")
                .isEqualTo(700);
        JsonObject status = jakarta.json.Json.createReader(new StringReader(
                        consumer.admin().get("/admin/retention").body()))
                .readObject();
        assertThat(status.getJsonObject("lastRun").getJsonNumber("rowsDeleted").longValue())
                .isEqualTo(25_500);
        assertThat(new InstanceMetrics(consumer.process()).gauge("retention_purged_rows_total"))
                .isGreaterThanOrEqualTo(25_500);
    }

    @Test
    void twoPurgesStartedAtTheSameInstantOneWorksTheOtherSkips() throws Exception {
        consumer.admin().postJson("/admin/retention/purge");
        consumer.ledger().insertProcessed(100_000, EXPIRED);
        CyclicBarrier start = new CyclicBarrier(2);

        List<CompletableFuture<JsonObject>> purges = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            purges.add(CompletableFuture.supplyAsync(() -> {
                arriveTogether(start);
                return consumer.admin().postJson("/admin/retention/purge");
            }));
        }
        List<JsonObject> runs = purges.stream().map(CompletableFuture::join).toList();

        Map<String, Long> outcomes =
                runs.stream().collect(Collectors.groupingBy(run -> run.getString("outcome"), Collectors.counting()));
        assertThat(outcomes).isEqualTo(Map.of("COMPLETED", 1L, "SKIPPED_LOCKED", 1L));
        assertThat(runs.stream()
                        .mapToLong(run -> run.getJsonNumber("rowsDeleted").longValue())
                        .sum())
                .isEqualTo(100_000);
        assertThat(consumer.ledger().processedAged(WINDOW, Duration.ofDays(365)))
                .isZero();
    }

    @Test
    void purgeDoesNotStallConsumptionAndADuplicateOfAYoungEventIsStillCaught() throws Exception {
        consumer.admin().postJson("/admin/retention/purge");
        String account = "retention-" + UUID.randomUUID().toString().substring(0, 8);
        UUID young = UUID.randomUUID();
        send(List.of(PaymentProducer.json(young, account, 1000)));
        await().atMost(Duration.ofSeconds(60))
                .until(() -> Long.valueOf(1000).equals(consumer.ledger().balance(account)));
        consumer.ledger().age(young, WINDOW.minusDays(4));
        // 300 batches with the duty cycle's rests: seconds of purge, against 101 messages consumed in about one.
        consumer.ledger().insertProcessed(300_000, EXPIRED);
        InstanceMetrics metrics = new InstanceMetrics(consumer.process());
        long duplicates = metrics.outcome("duplicate");

        CompletableFuture<JsonObject> purge =
                CompletableFuture.supplyAsync(() -> consumer.admin().postJson("/admin/retention/purge"));
        await().atMost(Duration.ofSeconds(30)).until(consumer.ledger()::purgeRunning);
        List<String> during = new ArrayList<>();
        during.add(PaymentProducer.json(young, account, 1000));
        for (int i = 1; i <= 100; i++) {
            during.add(PaymentProducer.json(UUID.randomUUID(), account, i));
        }
        send(during);
        await().atMost(Duration.ofSeconds(60))
                .until(() -> Long.valueOf(1000 + 5050).equals(consumer.ledger().balance(account)));

        assertThat(consumer.ledger().purgeRunning())
                .as("all 101 messages were consumed while the purge was still running")
                .isTrue();
        assertThat(metrics.outcome("duplicate")).isEqualTo(duplicates + 1);
        JsonObject run = purge.join();
        assertThat(run.getString("outcome")).isEqualTo("COMPLETED");
        assertThat(run.getJsonNumber("rowsDeleted").longValue()).isEqualTo(300_000);
        assertThat(consumer.ledger().isProcessed(young))
                .as("a record inside the window survives the purge")
                .isTrue();
    }

    @Test
    void theAdminApiRefusesAnonymousAndWrongCredentials() {
        assertThat(AdminClient.anonymous(consumer.process())
                        .get("/admin/retention")
                        .statusCode())
                .isEqualTo(401);
        assertThat(AdminClient.anonymous(consumer.process())
                        .post("/admin/retention/purge")
                        .statusCode())
                .isEqualTo(401);
        assertThat(AdminClient.as(consumer.process(), consumer.settings().get("ADMIN_USER"), "not-the-password")
                        .get("/admin/retention")
                        .statusCode())
                .isEqualTo(401);
        assertThat(consumer.admin().get("/admin/retention").statusCode()).isEqualTo(200);
    }

    // The timer purging on its own schedule, nobody calling the API, is FailoverSuiteIT's
    // retentionPurgesOnceAcrossTheInstances (three instances, every 5 s): not proved twice.

    /** A second instance, configured with a window that a late redelivery could outlast. */
    @Test
    void unsafeWindowIsRefusedWithTheKeysNamedAndNothingDeleted() throws Exception {
        Settings unsafe =
                consumer.settings().with("RETENTION_DAYS", "3").with("HTTP_PORT", String.valueOf(FreePort.find()));
        consumer.ledger().insertProcessed(10, Duration.ofDays(5));
        long oldRows = consumer.ledger().processedAged(Duration.ofDays(3), Duration.ofDays(365));
        try (PayaraMicroProcess refusing = PayaraMicroProcess.startReady("retention-unsafe-it", unsafe, Build.WAR)) {

            JsonObject run = AdminClient.as(refusing, unsafe.get("ADMIN_USER"), unsafe.get("ADMIN_PASSWORD"))
                    .postJson("/admin/retention/purge");

            assertThat(run.getString("outcome")).isEqualTo("REFUSED");
            assertThat(run.getString("detail"))
                    .contains(
                            "RETENTION_DAYS=3.00",
                            "BROKER_MAX_DELIVERY_ATTEMPTS",
                            "BROKER_MAX_REDELIVERY_DELAY_SECONDS",
                            "DLQ_REPLAY_DAYS");
            assertThat(Files.readString(refusing.log())).contains("Retention refused: RETENTION_DAYS=3.00");
        }
        assertThat(consumer.ledger().processedAged(Duration.ofDays(3), Duration.ofDays(365)))
                .isEqualTo(oldRows);
    }

    private static void send(List<String> bodies) throws Exception {
        try (PaymentProducer producer = new PaymentProducer(consumer.settings())) {
            for (String body : bodies) {
                producer.sendText(body);
            }
        }
    }

    private static void arriveTogether(CyclicBarrier barrier) {
        try {
            barrier.await();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
