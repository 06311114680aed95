package org.idempotent.payment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.TextMessage;
import jakarta.json.JsonObject;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.idempotent.delivery.control.MessageProperties;
import org.idempotent.fixtures.RunningConsumer;
import org.idempotent.loadgen.PaymentProducer;
import org.idempotent.stack.AdminClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Deliveries older than the dedup horizon (RETENTION_DAYS 14 less a day: 13 days) may be duplicates whose record
 * retention purged: without a dedup record they are quarantined, not applied, until an administrator releases them.
 */
class StaleDeliveryIT {

    private static final Duration PATIENCE = Duration.ofSeconds(60);
    private static final Duration HORIZON = Duration.ofDays(13);

    @RegisterExtension
    static final RunningConsumer consumer = RunningConsumer.shared();

    private static DeadLetterReader quarantine;

    @BeforeAll
    static void startConsumer() throws JMSException {
        quarantine =
                new DeadLetterReader(consumer.settings(), consumer.settings().get("QUARANTINE_QUEUE"));
    }

    @AfterAll
    static void stopConsumer() throws JMSException {
        if (quarantine != null) {
            quarantine.close();
        }
    }

    @Test
    void anEventJustPastTheHorizonWithoutADedupRecordIsQuarantinedAsStaleWithBothAges() throws JMSException {
        String account = account();
        UUID eventId = UUID.randomUUID();
        long quarantined = consumer.metrics().outcome("quarantined");

        String probe = send(eventId, account, 300, Instant.now().minus(HORIZON).minus(Duration.ofHours(1)), null);

        Message moved =
                quarantine.receive("probe = '" + probe + "'", 1, PATIENCE).get(0);
        assertThat(moved.getStringProperty(MessageProperties.REASON)).isEqualTo("STALE");
        assertThat(moved.getStringProperty(MessageProperties.EVENT_ID)).isEqualTo(eventId.toString());
        assertThat(Long.parseLong(moved.getStringProperty(MessageProperties.OCCURRED_AGE_SECONDS)))
                .isGreaterThan(HORIZON.toSeconds());
        assertThat(Long.parseLong(moved.getStringProperty(MessageProperties.MESSAGE_AGE_SECONDS)))
                .isLessThan(600);
        assertThat(moved.getStringProperty(MessageProperties.HORIZON_SECONDS))
                .isEqualTo(String.valueOf(HORIZON.toSeconds()));
        assertThat(consumer.metrics().outcome("quarantined") - quarantined).isEqualTo(1);
        assertThat(consumer.ledger().balance(account)).isNull();
        assertThat(consumer.ledger().isProcessed(eventId)).isFalse();
    }

    @Test
    void anEventJustInsideTheHorizonIsApplied() throws JMSException {
        String account = account();

        send(UUID.randomUUID(), account, 400, Instant.now().minus(HORIZON).plus(Duration.ofHours(1)), null);

        await().atMost(PATIENCE)
                .untilAsserted(
                        () -> assertThat(consumer.ledger().balance(account)).isEqualTo(400));
    }

    @Test
    void aStaleCopyWhoseDedupRecordIsStillThereIsAPlainDuplicate() throws JMSException {
        String account = account();
        UUID eventId = UUID.randomUUID();
        send(eventId, account, 500, null, null);
        await().atMost(PATIENCE)
                .untilAsserted(
                        () -> assertThat(consumer.ledger().balance(account)).isEqualTo(500));
        long duplicates = consumer.metrics().outcome("duplicate");
        long quarantined = consumer.metrics().outcome("quarantined");

        send(eventId, account, 500, Instant.now().minus(Duration.ofDays(40)), null);

        await().atMost(PATIENCE)
                .untilAsserted(() ->
                        assertThat(consumer.metrics().outcome("duplicate")).isEqualTo(duplicates + 1));
        assertThat(consumer.metrics().outcome("quarantined")).isEqualTo(quarantined);
        assertThat(consumer.ledger().balance(account)).isEqualTo(500);
    }

    /**
     * A version 1 event has no occurredAt: the time it was first sent counts, which a dead-letter forward carries as
     * originalTimestamp (a replayed dead letter is re-sent, and the send stamps a new JMSTimestamp).
     */
    @Test
    void aReplayedDeadLetterOfVersionOneIsJudgedByWhenItWasFirstSent() throws JMSException {
        String account = account();
        UUID eventId = UUID.randomUUID();
        long firstSent = Instant.now().minus(Duration.ofDays(20)).toEpochMilli();

        String probe = send(eventId, account, 600, null, firstSent);

        Message moved =
                quarantine.receive("probe = '" + probe + "'", 1, PATIENCE).get(0);
        assertThat(moved.getStringProperty(MessageProperties.REASON)).isEqualTo("STALE");
        assertThat(moved.propertyExists(MessageProperties.OCCURRED_AGE_SECONDS)).isFalse();
        assertThat(moved.getLongProperty(MessageProperties.ORIGINAL_TIMESTAMP))
                .as("kept, not restamped")
                .isEqualTo(firstSent);
        assertThat(consumer.ledger().balance(account)).isNull();
    }

    /** Release is audited like forget; the released message is applied once, and a second release finds nothing. */
    @Test
    void aReleasedStaleEventIsAppliedOnceAndTheReleaseIsAudited() throws Exception {
        String account = account();
        UUID eventId = UUID.randomUUID();
        String probe = send(eventId, account, 700, Instant.now().minus(Duration.ofDays(30)), null);
        await().atMost(PATIENCE).until(() -> quarantineHolds(probe));
        String release = "/admin/events/" + eventId + "/release";

        assertThat(consumer.admin().postJson(release, Map.of()).statusCode())
                .as("no reason given")
                .isEqualTo(400);
        assertThat(AdminClient.anonymous(consumer.process())
                        .postJson(release, Map.of("reason", "x"))
                        .statusCode())
                .isEqualTo(401);
        HttpResponse<String> released =
                consumer.admin().postJson(release, Map.of("reason", "archive replay checked by hand"));

        assertThat(released.statusCode()).as(released.body()).isEqualTo(200);
        JsonObject audit = AdminClient.json(released);
        assertThat(audit.getString("releasedBy")).isEqualTo(consumer.settings().get("ADMIN_USER"));
        assertThat(audit.getString("reason")).isEqualTo("archive replay checked by hand");
        assertThat(audit.getInt("messagesMoved")).isEqualTo(1);
        await().atMost(PATIENCE)
                .untilAsserted(
                        () -> assertThat(consumer.ledger().balance(account)).isEqualTo(700));
        assertThat(consumer.ledger().isProcessed(eventId)).isTrue();
        assertThat(consumer.admin().postJson(release, Map.of("reason", "again")).statusCode())
                .as("nothing left to release")
                .isEqualTo(404);
        JsonObject lookup = AdminClient.json(consumer.admin().get("/admin/events/" + eventId));
        assertThat(lookup.getJsonArray("released")).hasSize(1);

        // The same stale event sent once more is now a plain duplicate: release did not bypass the dedup.
        long duplicates = consumer.metrics().outcome("duplicate");
        send(eventId, account, 700, Instant.now().minus(Duration.ofDays(30)), null);
        await().atMost(PATIENCE)
                .untilAsserted(() ->
                        assertThat(consumer.metrics().outcome("duplicate")).isEqualTo(duplicates + 1));
        assertThat(consumer.ledger().balance(account)).isEqualTo(700);

        // Two weeks on, retention has purged its record and the release has lapsed with the horizon: another stale
        // copy is quarantined again, not applied a second time. (Another payment first, so that the account's
        // last-event guard cannot be what stops it.)
        send(UUID.randomUUID(), account, 1, null, null);
        await().atMost(PATIENCE)
                .untilAsserted(
                        () -> assertThat(consumer.ledger().balance(account)).isEqualTo(701));
        consumer.ledger().forget(eventId);
        consumer.ledger().ageReleases(eventId, HORIZON.plusHours(1));
        String late = send(eventId, account, 700, Instant.now().minus(Duration.ofDays(30)), null);
        assertThat(quarantine
                        .receive("probe = '" + late + "'", 1, PATIENCE)
                        .get(0)
                        .getStringProperty(MessageProperties.REASON))
                .isEqualTo("STALE");
        assertThat(consumer.ledger().balance(account)).isEqualTo(701);
    }

    private static boolean quarantineHolds(String probe) throws JMSException {
        return quarantine.count("probe = '" + probe + "'") == 1;
    }

    /** Sends the event with a probe property; occurredAt and an originalTimestamp property when given. */
    private static String send(UUID eventId, String account, long amount, Instant occurredAt, Long originalTimestamp)
            throws JMSException {
        String json = PaymentProducer.json(eventId, account, amount, occurredAt);
        String probe = UUID.randomUUID().toString();
        try (PaymentProducer producer = new PaymentProducer(consumer.settings())) {
            TextMessage message = producer.session().createTextMessage(json);
            message.setStringProperty("probe", probe);
            if (originalTimestamp != null) {
                message.setLongProperty(MessageProperties.ORIGINAL_TIMESTAMP, originalTimestamp);
            }
            producer.send(message);
        }
        return probe;
    }

    private static String account() {
        return "stale-" + UUID.randomUUID().toString().substring(0, 8);
    }
}
